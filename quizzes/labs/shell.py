"""The shell of a lab snippet, interpreted (never executed): words, variables, ``$(...)``.

A lab's answer may be a few command lines::

    jid=$(sbatch --parsable preprocess.sh)
    sbatch --dependency=afterok:${jid} train.sh

Nothing here starts a process.  :func:`parse` turns the text into `Statement`
objects: assignments (``NAME=value``, ``export NAME=value``) and simple commands,
separated by newlines, ``;`` or ``&&``, with ``\\``-newline continuations and ``#``
comments.  Words are built from pieces as a POSIX shell builds them: literal
text, ``'...'`` (no expansion), ``"..."`` (``$VAR``, ``${VAR}`` and ``$(...)``
expanded inside), ``$VAR``/``${VAR}``/``$(...)``/backquotes outside quotes (their
result is split on blanks, bash's field splitting).  :class:`Interpreter`
expands them and hands each command line to a ``runner`` (in a lab: minislurm's
``sbatch``, ``squeue``... on the simulated clock), whose standard output
becomes the value of a ``$(...)``.  Shell syntax a lab has no use for (pipes,
redirections, ``if``/``for``, background ``&``) is refused with a message
naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from quizzes.i18n import M, Msg
from quizzes.labs.model import Refusal

#: Longest ``$(...)`` nesting read.
MAX_DEPTH = 4
#: Longest value a variable or a command line may hold (``a=$a$a`` doubles each time).
MAX_VALUE = 64 * 1024

_NAME_START = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
_NAME_CHARS = _NAME_START + "0123456789"
_KEYWORDS = {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done",
             "case", "esac", "function", "select"}


class ShellError(Refusal):
    """The snippet uses shell the lab does not interpret (or is not valid shell)."""


@dataclass(frozen=True, slots=True)
class Piece:
    """One part of a word: ``kind`` is ``text``, ``var`` or ``cmd``; ``quoted`` when
    it stood inside double quotes (then its expansion is not split)."""

    kind: str
    value: str
    quoted: bool = False


@dataclass(frozen=True, slots=True)
class Word:
    pieces: tuple[Piece, ...]


@dataclass(frozen=True, slots=True)
class Statement:
    """``assign`` (``name`` = ``words[0]``) or ``command`` (``words``); ``line`` is 1-based."""

    kind: str
    words: tuple[Word, ...]
    line: int
    name: str = ""
    exported: bool = False


class _Lexer:
    """A hand-written scanner for the subset of sh a lab snippet needs."""

    def __init__(self, text: str, depth: int = 0) -> None:
        self.text = text
        self.pos = 0
        self.line = 1
        self.depth = depth

    def error(self, what: Msg) -> ShellError:
        return ShellError(M("line {line}: {what}", line=self.line, what=what))

    def peek(self, k: int = 0) -> str:
        i = self.pos + k
        return self.text[i] if i < len(self.text) else ""

    def statements(self) -> list[Statement]:
        out: list[Statement] = []
        words: list[Word] = []
        start_line = self.line
        while True:
            self._blanks()
            ch = self.peek()
            if ch in ("", "\n", ";") or (ch == "&" and self.peek(1) == "&"):
                if words:
                    out.append(_statement(words, start_line, self))
                words = []
                if ch == "":
                    return out
                if ch == "\n":
                    self.line += 1
                self.pos += 2 if ch == "&" else 1
                start_line = self.line
                continue
            if ch == "#" and not words:
                while self.peek() not in ("", "\n"):
                    self.pos += 1
                continue
            if ch == "#":  # a comment after words
                while self.peek() not in ("", "\n"):
                    self.pos += 1
                continue
            if ch == "|":
                raise self.error(M("pipes ('|', '||') are not interpreted in a lab; write "
                                   "each command on its own line"))
            if ch in "<>":
                raise self.error(M("redirections ('>', '<') are not interpreted in a lab: "
                                   "Slurm's own output files are graded"))
            if ch == "&":
                raise self.error(M("'&' (background) is not interpreted in a lab snippet"))
            if ch in "()":
                raise self.error(M("subshells '( ... )' are not interpreted in a lab"))
            word = self._word(depth=self.depth)
            if not words and len(word.pieces) == 1 and word.pieces[0].kind == "text" \
                    and word.pieces[0].value in _KEYWORDS:
                raise self.error(M("'{word}' (shell control flow) is not interpreted in a "
                                   "lab; write the commands one by one",
                                   word=word.pieces[0].value))
            words.append(word)

    def _blanks(self) -> None:
        while True:
            ch = self.peek()
            if ch in (" ", "\t", "\r"):
                self.pos += 1
            elif ch == "\\" and self.peek(1) == "\n":
                self.pos += 2
                self.line += 1
            else:
                return

    def _word(self, depth: int) -> Word:
        pieces: list[Piece] = []
        buf: list[str] = []

        def flush(quoted: bool = False) -> None:
            if buf:
                pieces.append(Piece("text", "".join(buf), quoted))
                buf.clear()

        while True:
            ch = self.peek()
            if ch == "" or ch in " \t\r\n;|<>&()":
                break
            if ch == "\\":
                nxt = self.peek(1)
                if nxt == "\n":
                    self.pos += 2
                    self.line += 1
                    continue
                buf.append(nxt)
                self.pos += 2
            elif ch == "'":
                end = self.text.find("'", self.pos + 1)
                if end < 0:
                    raise self.error(M("unexpected end of text: a ' is not closed"))
                buf.append(self.text[self.pos + 1:end])
                self.line += self.text.count("\n", self.pos, end)
                self.pos = end + 1
                flush(True)
            elif ch == '"':
                flush()
                self.pos += 1
                self._double(pieces, depth)
            elif ch == "$" or ch == "`":
                piece = self._dollar(depth, quoted=False)
                if piece is None:
                    buf.append("$")
                    continue
                flush()
                pieces.append(piece)
            else:
                buf.append(ch)
                self.pos += 1
        flush()
        return Word(tuple(pieces))

    def _double(self, pieces: list[Piece], depth: int) -> None:
        buf: list[str] = []
        while True:
            ch = self.peek()
            if ch == "":
                raise self.error(M('unexpected end of text: a " is not closed'))
            if ch == '"':
                self.pos += 1
                break
            if ch == "\\" and self.peek(1) in '$`"\\\n':
                if self.peek(1) != "\n":
                    buf.append(self.peek(1))
                self.pos += 2
                continue
            if ch in "$`":
                piece = self._dollar(depth, quoted=True)
                if piece is None:
                    buf.append("$")
                    continue
                if buf:
                    pieces.append(Piece("text", "".join(buf), True))
                    buf = []
                pieces.append(piece)
                continue
            if ch == "\n":
                self.line += 1
            buf.append(ch)
            self.pos += 1
        pieces.append(Piece("text", "".join(buf), True))

    def _dollar(self, depth: int, *, quoted: bool) -> Piece | None:
        """``$NAME``, ``${NAME}``, ``$(...)`` or a backquoted command; None for a lone ``$``."""
        if self.peek() == "`":
            end = self.text.find("`", self.pos + 1)
            if end < 0:
                raise self.error(M("unexpected end of text: a ` is not closed"))
            inner = self.text[self.pos + 1:end]
            self.pos = end + 1
            return self._command(inner, depth, quoted)
        nxt = self.peek(1)
        if nxt == "(":
            if self.peek(2) == "(":
                raise self.error(M("arithmetic '$((...))' is not interpreted in a lab"))
            start = self.pos + 2
            level, i = 1, start
            while i < len(self.text) and level:
                if self.text[i] == "(":
                    level += 1
                elif self.text[i] == ")":
                    level -= 1
                i += 1
            if level:
                raise self.error(M("unexpected end of text: a '$(' is not closed"))
            inner = self.text[start:i - 1]
            self.pos = i
            return self._command(inner, depth, quoted)
        if nxt == "{":
            end = self.text.find("}", self.pos + 2)
            if end < 0:
                raise self.error(M("unexpected end of text: a '${{' is not closed"))
            name = self.text[self.pos + 2:end]
            if not _is_name(name):
                raise self.error(M("'{ref}': only plain ${{NAME}} is interpreted in a lab",
                                   ref="${" + name + "}"))
            self.pos = end + 1
            return Piece("var", name, quoted)
        if nxt and nxt in _NAME_START:
            i = self.pos + 1
            while i < len(self.text) and self.text[i] in _NAME_CHARS:
                i += 1
            name = self.text[self.pos + 1:i]
            self.pos = i
            return Piece("var", name, quoted)
        if nxt and (nxt.isdigit() or nxt in "?#@*!$-"):
            raise self.error(M("'{ref}' is not interpreted in a lab", ref="$" + nxt))
        self.pos += 1
        return None

    def _command(self, inner: str, depth: int, quoted: bool) -> Piece:
        if depth + 1 > MAX_DEPTH:
            raise self.error(M("more than {n} nested $(...)", n=MAX_DEPTH))
        try:
            _Lexer(inner, depth + 1).statements()  # check it now
        except ShellError as exc:  # name the outer line
            raise self.error(dict(exc.said.args)["what"]) from None
        return Piece("cmd", inner, quoted)


def _is_name(text: str) -> bool:
    return bool(text) and text[0] in _NAME_START and all(c in _NAME_CHARS for c in text)


def _statement(words: list[Word], line: int, lexer: _Lexer) -> Statement:
    first = words[0]
    if first.pieces and first.pieces[0].kind == "text" and not first.pieces[0].quoted:
        head = first.pieces[0].value
        if head == "export" and len(first.pieces) == 1:
            if len(words) != 2:
                raise lexer.error(M("write one 'export NAME=value' per line"))
            assign = _assignment(words[1], line, lexer)
            if assign is None:
                raise lexer.error(M("write 'export NAME=value'"))
            return Statement("assign", assign.words, line, assign.name, exported=True)
        assign = _assignment(first, line, lexer)
        if assign is not None:
            if len(words) > 1:
                raise lexer.error(M("'NAME=value command' (an environment for one command) "
                                    "is not interpreted in a lab; use an sbatch option"))
            return assign
    return Statement("command", tuple(words), line)


def _assignment(word: Word, line: int, lexer: _Lexer) -> Statement | None:
    first = word.pieces[0] if word.pieces else None
    if first is None or first.kind != "text" or first.quoted or "=" not in first.value:
        return None
    name, _, rest = first.value.partition("=")
    if not _is_name(name):
        return None
    value = ((Piece("text", rest, True),) if rest else ()) + tuple(
        Piece(p.kind, p.value, True) for p in word.pieces[1:])  # no splitting in assignments
    return Statement("assign", (Word(value),), line, name)


def parse(text: str) -> list[Statement]:
    """The statements of a snippet; raises `ShellError` naming the line."""
    return _Lexer(text).statements()


#: Runs one command line with the exported variables; returns (stdout, stderr, exit code).
Runner = Callable[[list[str], dict[str, str]], tuple[str, str, int]]


class Interpreter:
    """Expands and runs statements against a ``runner``; keeps the shell's variables."""

    def __init__(self, runner: Runner, env: Mapping[str, str] | None = None,
                 *, max_commands: int = 64) -> None:
        self.runner = runner
        self.vars: dict[str, str] = dict(env or {})
        self.exported: set[str] = set()  # ``export NAME=...``: commands see them
        self.max_commands = max_commands
        self.commands = 0
        self.transcript: list[tuple[list[str], str, str, int]] = []

    def run(self, text: str, depth: int = 0) -> tuple[str, int]:
        """Run a snippet; returns (its standard output, the last exit code)."""
        out: list[str] = []
        rc = 0
        for st in parse(text):
            if st.kind == "assign":
                value, rc = self._expand_joined(st.words[0], depth)
                if len(value) > MAX_VALUE:
                    raise ShellError(M("line {line}: {what}", line=st.line, what=M(
                        "{name} would hold {n} characters; a lab's shell keeps at most {limit}",
                        name=st.name, n=len(value), limit=MAX_VALUE)))
                self.vars[st.name] = value
                if st.exported:
                    self.exported.add(st.name)
                continue
            argv: list[str] = []
            for word in st.words:
                fields, sub_rc = self._expand(word, depth)
                argv.extend(fields)
                rc = sub_rc if sub_rc else rc
            if not argv:
                continue
            if sum(len(a) for a in argv) > MAX_VALUE:
                raise ShellError(M("line {line}: {what}", line=st.line, what=M(
                    "the command line is longer than {limit} characters", limit=MAX_VALUE)))
            self.commands += 1
            if self.commands > self.max_commands:
                raise ShellError(M("more than {n} commands: a lab snippet needs a few lines",
                                   n=self.max_commands))
            env = {k: self.vars[k] for k in sorted(self.exported)}
            stdout, stderr, rc = self.runner(argv, env)
            self.transcript.append((argv, stdout, stderr, rc))
            out.append(stdout)
        return "".join(out), rc

    def _expand_joined(self, word: Word, depth: int) -> tuple[str, int]:
        parts, rc = [], 0
        for p in word.pieces:
            value, sub_rc = self._piece(p, depth)
            parts.append(value)
            rc = sub_rc or rc
        return "".join(parts), rc

    def _expand(self, word: Word, depth: int) -> tuple[list[str], int]:
        """Field splitting as sh does it: unquoted expansions split on blanks."""
        fields: list[str] = []
        current: list[str] = []
        started = False
        rc = 0
        for p in word.pieces:
            value, sub_rc = self._piece(p, depth)
            rc = sub_rc or rc
            if p.kind == "text" or p.quoted:
                current.append(value)
                started = True
                continue
            chunks = value.split()
            if not chunks:
                continue
            if value[:1].isspace() and (current or started):
                fields.append("".join(current))
                current, started = [], False
            for k, chunk in enumerate(chunks):
                if k:
                    fields.append("".join(current))
                    current = []
                current.append(chunk)
                started = True
            if value[-1:].isspace():
                fields.append("".join(current))
                current, started = [], False
        if current or started:
            fields.append("".join(current))
        return fields, rc

    def _piece(self, p: Piece, depth: int) -> tuple[str, int]:
        if p.kind == "text":
            return p.value, 0
        if p.kind == "var":
            return self.vars.get(p.value, ""), 0
        out, rc = self.run(p.value, depth + 1)
        return out.rstrip("\n"), rc
