"""``{{name}}`` templates: how a variant's parameters fill every learner-facing text.

One rule for prompts, options, explanations, feedback, scenarios and exhibits:
``{{ name }}`` (spaces allowed) is replaced by the variant's value of ``name``;
a placeholder naming no parameter is left as it is, so a test can find it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def fill(template: str, params: Mapping[str, Any]) -> str:
    """Replace ``{{name}}`` placeholders by the variant's parameter values."""
    if "{{" not in template:
        return template

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        return str(params[name]) if name in params else match.group(0)

    return PLACEHOLDER.sub(sub, template)


def placeholders(template: str) -> set[str]:
    """Names of the ``{{name}}`` placeholders in a template."""
    return set(PLACEHOLDER.findall(template))
