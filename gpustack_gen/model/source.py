"""Read a fleet file into plain data while remembering where every value came from.

ruamel.yaml (YAML 1.2) parses the text; the round-trip nodes carry line and column numbers, which we
copy into a position table keyed by field path before handing plain dicts and lists to pydantic.
Hostile input is refused here, before validation: oversized files, non-UTF-8 bytes, duplicate keys,
several documents, alias expansion beyond a node budget, and nesting beyond a depth limit.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import FleetError, Problem

MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_NODES = 200_000  # after alias expansion; a 1000-cluster fleet is about 60k nodes
MAX_DEPTH = 64

PathKey = tuple[str | int, ...]


@dataclass(frozen=True)
class SourceDocument:
    """Plain data of one fleet file plus the position of each value and mapping key (1-based)."""

    name: str
    data: Any
    value_positions: dict[PathKey, tuple[int, int]] = field(repr=False)
    key_positions: dict[PathKey, tuple[int, int]] = field(repr=False)

    def locate(self, path: PathKey, *, key: bool = False) -> tuple[int, int]:
        """Position of ``path``, or of its nearest ancestor that has one; ``key`` prefers the key."""
        for end in range(len(path), -1, -1):
            prefix = path[:end]
            if key and prefix in self.key_positions:
                return self.key_positions[prefix]
            if prefix in self.value_positions:
                return self.value_positions[prefix]
            if prefix in self.key_positions:
                return self.key_positions[prefix]
        return (1, 1)

    def problem(self, path: PathKey, message: str, hint: str = "", *, key: bool = False, **kw: Any) -> Problem:
        line, column = self.locate(path, key=key)
        return Problem(self.name, line, column, format_path(path), message, hint, **kw)


def format_path(path: PathKey) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


def read_source(source: str | Path, *, name: str | None = None) -> SourceDocument:
    """Load a fleet from a path or from YAML text (text is anything containing a newline or a colon)."""
    if isinstance(source, Path):
        label = name or _display_name(source)
        try:
            size = source.stat().st_size
        except OSError as exc:
            raise FleetError([Problem(label, 0, 0, "", f"cannot read file: {exc.strerror or exc}")]) from None
        if size > MAX_FILE_BYTES:
            raise FleetError([_too_big(label, size)])
        try:
            raw = source.read_bytes()
        except OSError as exc:
            raise FleetError([Problem(label, 0, 0, "", f"cannot read file: {exc.strerror or exc}")]) from None
        return parse_bytes(raw, label)
    return parse_text(source, name or "<string>")


def _display_name(path: Path) -> str:
    # Relative paths are shown as given so that headers do not depend on the machine's layout.
    return path.as_posix() if not path.is_absolute() else path.name


def _too_big(label: str, size: int) -> Problem:
    return Problem(
        label,
        0,
        0,
        "",
        f"file is {size:,} bytes; the limit is {MAX_FILE_BYTES:,} bytes",
        "split the fleet into several files, or check that this is the fleet file",
    )


def parse_bytes(raw: bytes, label: str) -> SourceDocument:
    if len(raw) > MAX_FILE_BYTES:
        raise FleetError([_too_big(label, len(raw))])
    try:
        text = raw.decode("utf-8-sig")  # a UTF-8 BOM is accepted and dropped
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise FleetError(
            [
                Problem(
                    label,
                    line,
                    column,
                    "",
                    f"not valid UTF-8 (byte 0x{raw[exc.start]:02x})",
                    "save the file as UTF-8",
                )
            ]
        ) from None
    return parse_text(text, label)


def parse_text(text: str, label: str) -> SourceDocument:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        raise FleetError([_too_big(label, len(text))])
    text = text.removeprefix("\ufeff")
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        documents = list(yaml.load_all(text))
    except MarkedYAMLError as exc:
        raise FleetError([_yaml_problem(label, exc)]) from None
    except YAMLError as exc:
        raise FleetError([Problem(label, 0, 0, "", f"invalid YAML: {exc}")]) from None
    except RecursionError:
        raise FleetError(
            [
                Problem(
                    label,
                    0,
                    0,
                    "",
                    "nesting is too deep to parse",
                    f"a fleet file nests at most {MAX_DEPTH} levels",
                )
            ]
        ) from None
    documents = [d for d in documents if d is not None] if len(documents) > 1 else documents
    if len(documents) > 1:
        line = _start_line(documents[1])
        raise FleetError(
            [
                Problem(
                    label,
                    line,
                    1,
                    "",
                    f"found {len(documents)} YAML documents; a fleet file holds exactly one",
                    "remove the '---' separators, or put each fleet in its own file",
                )
            ]
        )
    if not documents or documents[0] is None:
        raise FleetError(
            [
                Problem(
                    label,
                    1,
                    1,
                    "",
                    "the file is empty",
                    "start from `gpustack-gen schema` or the README example",
                )
            ]
        )
    builder = _Builder(label)
    data = builder.convert(documents[0], (), 0)
    if builder.problems:
        raise FleetError(builder.problems)
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else f"a {type(data).__name__} scalar"
        raise FleetError(
            [
                Problem(
                    label,
                    1,
                    1,
                    "",
                    f"the top level is {kind}; expected a mapping with apiVersion, kind and clusters",
                )
            ]
        )
    builder.value_positions.setdefault((), (1, 1))
    return SourceDocument(label, data, builder.value_positions, builder.key_positions)


def _start_line(node: Any) -> int:
    lc = getattr(node, "lc", None)
    return int(lc.line) + 1 if lc is not None and lc.line is not None else 0


def _yaml_problem(label: str, exc: Any) -> Problem:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark else 0
    column = mark.column + 1 if mark else 0
    problem = (exc.problem or "invalid YAML").strip()
    hint = ""
    if "found character '\\t'" in problem or "\t" in problem:
        problem = "a tab character is used for indentation"
        hint = "YAML indents with spaces only"
    elif "duplicate key" in problem:
        context = exc.context_mark
        first = f" (first at line {context.line + 1})" if context else ""
        problem = f"{problem}{first}"
        hint = "each key may appear once per mapping; remove one of them"
    return Problem(label, line, column, "", f"invalid YAML: {problem}", hint)


class _Builder:
    """Turns ruamel round-trip nodes into plain data, recording positions and refusing hostile shapes."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.value_positions: dict[PathKey, tuple[int, int]] = {}
        self.key_positions: dict[PathKey, tuple[int, int]] = {}
        self.problems: list[Problem] = []
        self.nodes = 0

    def _fail(self, path: PathKey, message: str, hint: str = "") -> None:
        line, column = self.value_positions.get(path) or self.key_positions.get(path) or (0, 0)
        self.problems.append(Problem(self.label, line, column, format_path(path), message, hint))

    def convert(self, node: Any, path: PathKey, depth: int) -> Any:
        from ruamel.yaml.comments import CommentedMap, CommentedSeq
        from ruamel.yaml.scalarint import BinaryInt, HexInt, OctalInt

        self.nodes += 1
        if self.nodes > MAX_NODES:
            if self.nodes == MAX_NODES + 1:
                self._fail(
                    path,
                    f"the document expands to more than {MAX_NODES:,} values (aliases included)",
                    "an alias bomb or a fleet too large for one file; split it",
                )
            return None
        if depth > MAX_DEPTH:
            self._fail(path, f"nesting deeper than {MAX_DEPTH} levels", "a fleet file is a few levels deep")
            return None
        if isinstance(node, CommentedMap):
            result: dict[Any, Any] = {}
            for key, value in node.items():
                if isinstance(key, (CommentedMap, CommentedSeq)):
                    self._fail(path, "a mapping key must be a scalar")
                    continue
                child = (*path, key if isinstance(key, str) else str(key))
                key_pos, value_pos = _positions(node, key)
                if key_pos is not None:
                    self.key_positions[child] = (key_pos[0] + 1, key_pos[1] + 1)
                if value_pos is not None:
                    self.value_positions[child] = (value_pos[0] + 1, value_pos[1] + 1)
                result[self.convert(key, child, depth + 1) if not isinstance(key, str) else key] = self.convert(
                    value, child, depth + 1
                )
            return result
        if isinstance(node, CommentedSeq):
            items: list[Any] = []
            for index, value in enumerate(node):
                child = (*path, index)
                pos = node.lc.item(index)
                if pos is not None:
                    self.value_positions[child] = (pos[0] + 1, pos[1] + 1)
                items.append(self.convert(value, child, depth + 1))
            return items
        if isinstance(node, (OctalInt, HexInt, BinaryInt)):
            self._fail(path, f"the integer is written in base {_base(node)}", "write integers in decimal")
            return int(node)
        if isinstance(node, bool) or node is None:
            return node
        if isinstance(node, int):
            return int(node)
        if isinstance(node, float):
            return float(node)
        if isinstance(node, str):
            return str(node)
        if isinstance(node, (datetime.date, datetime.datetime)):
            # Kept as a date so that validation reports "expected a string"; the hint says to quote it.
            return node
        return node


def _positions(node: Any, key: Any) -> tuple[Any, Any]:
    """Key and value positions; keys pulled in by a ``<<`` merge have none of their own."""
    try:
        return node.lc.key(key), node.lc.value(key)
    except KeyError:
        return None, None


def _base(node: Any) -> int:
    from ruamel.yaml.scalarint import BinaryInt, HexInt

    return 16 if isinstance(node, HexInt) else 2 if isinstance(node, BinaryInt) else 8
