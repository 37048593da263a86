"""Prompts and explanations as the prose they are: a small, safe Markdown subset to HTML.

Bank texts are short Markdown: paragraphs separated by blank lines, inline
```code``` in backticks, and code only where the author marks it (a fenced
```` ``` ```` block or lines indented by four spaces, as Markdown does).  Prose
becomes ``<p>`` (YAML's folded line breaks inside a paragraph become spaces, so
the browser wraps between words, never inside one); code becomes
``<pre><code>``.  Everything is HTML-escaped first: a bank cannot inject markup.
"""

from __future__ import annotations

import html
import re

_INLINE_CODE = re.compile(r"`([^`\n]+)`")
PRE_STYLE = ("white-space:pre;overflow-x:auto;background:#f6f8fa;padding:6px 8px;"
             "border-radius:4px;font-size:90%")


def inline(text: str) -> str:
    """One paragraph's text: escaped, with ``code`` spans."""
    escaped = html.escape(text, quote=False)
    return _INLINE_CODE.sub(lambda m: f"<code>{m.group(1)}</code>", escaped)


def plain(text: str) -> str:
    """A text for a widget label that cannot hold markup (radio buttons, checkboxes):
    inline ``code`` loses its backticks, line breaks become spaces."""
    return " ".join(_INLINE_CODE.sub(lambda m: m.group(1), text).split())


def code_block(text: str) -> str:
    """Preformatted code (exhibits, scripts): kept exactly, scrolled rather than wrapped."""
    return f"<pre style='{PRE_STYLE}'><code>{html.escape(text, quote=False)}</code></pre>"


def _blocks(text: str) -> list[tuple[str, str]]:
    """(kind, text) blocks: kind is ``p`` (prose) or ``code``."""
    lines = text.replace("\r\n", "\n").split("\n")
    blocks: list[tuple[str, str]] = []
    para: list[str] = []
    i = 0

    def flush() -> None:
        if para:
            blocks.append(("p", " ".join(s.strip() for s in para)))
            para.clear()

    while i < len(lines):
        line = lines[i]
        if line.strip().startswith("```"):
            flush()
            code: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                code.append(lines[i])
                i += 1
            blocks.append(("code", "\n".join(code)))
            i += 1
            continue
        if line.startswith("    ") and line.strip() and not para:
            code = []
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                code.append(lines[i][4:])
                i += 1
            blocks.append(("code", "\n".join(code).rstrip("\n")))
            continue
        if not line.strip():
            flush()
        else:
            para.append(line)
        i += 1
    flush()
    return blocks


def to_html(text: str) -> str:
    """The HTML of a bank text (prompt, option, explanation, feedback)."""
    out = []
    for kind, body in _blocks(text):
        out.append(code_block(body) if kind == "code" else f"<p>{inline(body)}</p>")
    return "".join(out)
