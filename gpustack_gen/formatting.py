"""One value on one line, as the diff, plan and verify reports print it."""

from __future__ import annotations

import json
import re
from typing import Any

_PLAIN = re.compile(r"[A-Za-z0-9_./:@%+=-][A-Za-z0-9_./:@%+=, -]*\Z")
_NOT_STRINGS = re.compile(r"(?i)(true|false|yes|no|on|off|null|~|[-+]?[0-9][0-9._:eE+-]*)\Z")


def format_value(value: Any) -> str:
    """A compact one-line form: plain strings as is, everything else as JSON."""
    if isinstance(value, str) and _PLAIN.match(value) and not _NOT_STRINGS.match(value) and value.strip() == value:
        return value
    return json.dumps(value, separators=(", ", ": "), ensure_ascii=False)
