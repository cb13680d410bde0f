"""Text from the fleet or the cluster, made inert inside Markdown reports (pull-request comments)."""

from __future__ import annotations

import re
from typing import Any

from ..inert import inert_line

_MARKDOWN_SPECIAL = {c: f"&#{ord(c)};" for c in "\\`*_[]|~@#"}  # inline syntax, table cells, autolinks, mentions
_MARKDOWN_SPECIAL.update({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "\n": " ", "\r": " "})
_MARKDOWN_SPECIAL_RE = re.compile("[" + re.escape("".join(_MARKDOWN_SPECIAL)) + "]")


def markdown_escape(value: Any) -> Any:
    """HTML-escape and neutralize Markdown syntax in one pass: inert inside table cells and inline HTML, and on a
    terminal (control characters escaped)."""
    from markupsafe import Markup

    return Markup(inert_line(_MARKDOWN_SPECIAL_RE.sub(lambda m: _MARKDOWN_SPECIAL[m.group(0)], str(value))))
