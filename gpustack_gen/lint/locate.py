"""Map a finding's field path back to the line and column of a YAML file.

Documents are parsed with ruamel.yaml's round-trip loader, which remembers where each key and list item
starts. A YAML file embedded in a string (a ConfigMap ``data`` value, a Helm ``config.data`` value) is
parsed on its own; for a literal block scalar (``key: |``) its positions are shifted by the line and
indentation where the block starts, so findings inside it point at the right place of the outer file.
Any other string (quoted, folded) maps every finding to the value itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Source", "embedded_source", "join_path", "locate", "parse_path"]

_TOKEN = re.compile(r'\.?([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')


@dataclass(frozen=True)
class Source:
    """A parsed YAML tree and where it sits in its file.

    ``line_offset``/``col_offset`` (0-based) are added to ruamel's 0-based positions inside ``node``;
    when ``exact`` is false every path maps to ``anchor`` (1-based line, column).
    """

    node: Any
    line_offset: int = 0
    col_offset: int = 0
    exact: bool = True
    anchor: tuple[int, int] = (0, 0)


def parse_path(path: str) -> list[str | int]:
    """Inverse of ``findings.format_path``: ``'a.b[0]["1g.10gb"]'`` -> ``["a", "b", 0, "1g.10gb"]``.

    Text that does not parse ends the path (the finding then points at the deepest part found).
    """
    parts: list[str | int] = []
    position = 0
    while position < len(path):
        match = _TOKEN.match(path, position)
        if match is None or match.end() == position:
            break
        name, index, quoted = match.groups()
        if name is not None:
            parts.append(name)
        elif index is not None:
            parts.append(int(index))
        else:
            parts.append(str(json.loads(quoted)))
        position = match.end()
    return parts


def join_path(prefix: str, path: str) -> str:
    """``join_path("data.a", "flags.x")`` -> ``"data.a.flags.x"``; list indices and quoted keys join without a dot."""
    if not prefix:
        return path
    if not path:
        return prefix
    return prefix + path if path.startswith("[") else f"{prefix}.{path}"


def _start(node: Any) -> tuple[int, int] | None:
    lc = getattr(node, "lc", None)
    if lc is None or lc.line is None:
        return None
    return int(lc.line), int(lc.col)


def _lookup_key(node: Mapping[Any, Any], part: str | int) -> Any:
    if part in node:
        return part
    return next((key for key in node if str(key) == str(part)), None)


def locate(source: Source, parts: Sequence[str | int]) -> tuple[int, int]:
    """1-based (line, column) of the key or list item ``parts`` names in ``source``.

    A path that does not exist in the document (a missing required key) points at its deepest existing
    part; the empty path points at the start of the document.
    """
    if not source.exact:
        return source.anchor
    node = source.node
    position = _start(node)
    for part in parts:
        lc = getattr(node, "lc", None)
        if isinstance(node, Mapping) and lc is not None:
            key = _lookup_key(node, part)
            if key is None:
                break
            found = lc.key(key)
            node = node[key]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node) and lc is not None:
            found = lc.item(part)
            node = node[part]
        else:
            break
        if found is not None and found[0] is not None:
            position = (int(found[0]), int(found[1]))
    if position is None:
        return source.anchor
    return position[0] + source.line_offset + 1, position[1] + source.col_offset + 1


def embedded_source(parent: Any, key: Any, parsed: Any, lines: Sequence[str]) -> Source:
    """Where the YAML text ``parent[key]`` (already parsed into ``parsed``) sits in the file ``lines``."""
    from ruamel.yaml.scalarstring import LiteralScalarString

    lc = getattr(parent, "lc", None)
    value_at = lc.value(key) if lc is not None else None
    if value_at is None or value_at[0] is None:
        key_at = lc.key(key) if lc is not None else None
        anchor = (int(key_at[0]) + 1, int(key_at[1]) + 1) if key_at else (0, 0)
        return Source(parsed, exact=False, anchor=anchor)
    line, col = int(value_at[0]), int(value_at[1])
    anchor = (line + 1, col + 1)
    if isinstance(parent[key], Mapping | list):
        return Source(parent[key], anchor=anchor)
    if not isinstance(parent[key], LiteralScalarString):
        return Source(parsed, exact=False, anchor=anchor)
    # A literal block: the text starts on the next line, at the indentation of its first non-blank line.
    first = line + 1
    indent = 0
    for text in lines[first:]:
        if text.strip():
            indent = len(text) - len(text.lstrip(" "))
            break
    return Source(parsed, line_offset=first, col_offset=indent, anchor=anchor)
