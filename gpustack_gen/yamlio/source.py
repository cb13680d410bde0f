"""Read a fleet file into plain data while remembering where every value came from.

ruamel.yaml (YAML 1.2) parses the text. An ordinary fleet is read by the fast path (``fast_reader.py``: C parser
events, built into the same data and positions); anything unusual sends the file to the round-trip path, whose
nodes carry line and column numbers, which we copy into a position table keyed by field path before handing
plain dicts and lists to pydantic, and which explains every problem in detail.
Hostile input is refused here, before validation: oversized files, non-UTF-8 bytes, control characters,
duplicate keys, several documents, a ``%YAML 1.1`` directive, tags, non-string keys, YAML 1.1 number
forms, alias expansion beyond a node budget, and nesting beyond a depth limit.
"""

from __future__ import annotations

import datetime
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import FleetError, Problem, value_kind

# Files are read by the fast path (fast_reader.py: C parser events, about 20x the round-trip loader's speed) and,
# when it gives up on something unusual, by ruamel's round-trip loader, which says exactly what is wrong. The
# round-trip loader reads about 120 KB/s and keeps ~170 bytes of objects per input byte, so it only reads files
# up to MAX_DETAILED_BYTES (1 MiB is ~10 s and ~200 MB at worst); a larger file that the fast path gives up on is
# refused with the fast path's own located problem. A fleet of 8 pools and 20 workloads per cluster is about
# 4.6 KB per cluster.
from .input_file import InputFileError, read_input_bytes
from .limits import MAX_DEPTH, MAX_DETAILED_BYTES, MAX_FLEET_BYTES, MAX_NODES, value_error_reason

if TYPE_CHECKING:
    from .reread import Reading

PathKey = tuple[str | int, ...]

_SIMPLE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_YAML_DIRECTIVE = re.compile(r"^%YAML[ \t]+(\S*)", re.MULTILINE)
_STANDARD_TAG = "tag:yaml.org,2002:"


@dataclass(frozen=True)
class SourceDocument:
    """Plain data of one fleet file plus the position of each value and mapping key (1-based).

    ``reading``: kept for re-reading another version of the file (``keep=True``). ``kept_items``: of a
    re-read document, the cluster indexes whose items are the previous document's objects at the same index.
    """

    name: str
    data: Any
    value_positions: Mapping[PathKey, tuple[int, int]] = field(repr=False)
    key_positions: Mapping[PathKey, tuple[int, int]] = field(repr=False)
    reading: Reading | None = field(default=None, repr=False, compare=False)
    kept_items: frozenset[int] = field(default=frozenset(), repr=False, compare=False)

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
    """``clusters[0].nodePools[1].sharing.layout["1g.10gb"]``: keys with dots or odd characters are quoted."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _SIMPLE_KEY.fullmatch(part):
            text += f".{part}" if text else part
        else:
            text += '["' + part.replace("\\", "\\\\").replace('"', '\\"') + '"]'
    return text


def read_source(
    source: str | Path, *, name: str | None = None, previous: Reading | None = None, keep: bool = False
) -> SourceDocument:
    """Load a fleet from a path or from YAML text.

    A ``str`` is YAML text when it holds a newline or a colon (any fleet does), else a file path.
    ``previous``: the reading of another version of the file (``reread.py``), used where the texts agree, and
    released before a full read; ``keep``: keep this document's reading (``SourceDocument.reading``).
    """
    if isinstance(source, str) and "\n" not in source and ":" not in source and source.strip():
        source = Path(source)
    if isinstance(source, Path):
        label = name or _display_name(source)
        try:
            raw = read_input_bytes(source, MAX_FLEET_BYTES)
        except InputFileError as exc:
            hint = "split the fleet into several files, or check that this is the fleet file" if exc.too_large else ""
            raise FleetError([Problem(label, 0, 0, "", exc.reason, hint)]) from None
        return parse_bytes(raw, label, previous=previous, keep=keep)
    return parse_text(source, name or "<string>", previous=previous, keep=keep)


def _display_name(path: Path) -> str:
    # Relative paths are shown as given so that headers do not depend on the machine's layout.
    return path.as_posix() if not path.is_absolute() else path.name


def _too_big(label: str, size: int) -> Problem:
    return Problem(
        label,
        0,
        0,
        "",
        f"file is {size:,} bytes; the limit is {MAX_FLEET_BYTES:,} bytes",
        "split the fleet into several files, or check that this is the fleet file",
    )


def parse_bytes(raw: bytes, label: str, *, previous: Reading | None = None, keep: bool = False) -> SourceDocument:
    if len(raw) > MAX_FLEET_BYTES:
        raise FleetError([_too_big(label, len(raw))])
    try:
        text = raw.decode("utf-8-sig")  # a UTF-8 BOM is accepted and dropped
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        hint = "save the file as UTF-8"
        if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
            hint = "the file starts with a UTF-16 byte-order mark; save it as UTF-8"
        raise FleetError(
            [Problem(label, line, column, "", f"not valid UTF-8 (byte 0x{raw[exc.start]:02x})", hint)]
        ) from None
    return parse_text(text, label, previous=previous, keep=keep)


def parse_text(text: str, label: str, *, previous: Reading | None = None, keep: bool = False) -> SourceDocument:
    from .fast_reader import GiveUp

    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_FLEET_BYTES:
        raise FleetError([_too_big(label, size)])
    text = text.removeprefix("\ufeff")
    detailed = size <= MAX_DETAILED_BYTES
    if detailed:  # the pre-scan protects the round-trip parser's stack; the fast path has its own depth limit
        early = _prescan(text, label)
        if early is not None:
            raise FleetError([early])
    try:
        if previous is not None:
            found = _reread(previous, text, label)
            if found is not None:
                return found
        return _fast_parse(text, label, keep=keep)
    except GiveUp as stop:
        if not detailed:
            raise FleetError([_gave_up_problem(label, stop)]) from None
    return _rt_parse(text, label)


def _fast_parse(text: str, label: str, *, pure: bool = False, keep: bool = False) -> SourceDocument:
    """The fast path (``fast_reader``): the same document as ``_rt_parse`` for a valid fleet, else ``GiveUp``."""
    if keep and not pure:
        from .reread import keep_reading

        data, value_positions, key_positions, reading = keep_reading(text)
        return SourceDocument(label, data, value_positions, key_positions, reading=reading)
    from .fast_reader import fast_load

    data, value_positions, key_positions = fast_load(text, pure=pure)
    return SourceDocument(label, data, value_positions, key_positions)


def _reread(previous: Reading, text: str, label: str) -> SourceDocument | None:
    """``text`` re-read from ``previous`` (``reread.py``), or None after releasing it, for a full read."""
    from .reread import reread

    found = reread(previous, text)
    if found is None:
        previous.release()
        return None
    return SourceDocument(label, found.data, found.value_positions, found.key_positions, kept_items=found.kept_items)


def _gave_up_problem(label: str, stop: Any) -> Problem:
    """What the fast path stopped at, for a file too large for the detailed round-trip path."""
    if stop.error is not None:
        return _yaml_problem(label, stop.error)
    if stop.supported:
        return Problem(label, stop.line, stop.column, format_path(stop.path), stop.message, stop.hint)
    split = f"split the fleet into files of at most {MAX_DETAILED_BYTES:,} bytes"
    return Problem(
        label,
        stop.line,
        stop.column,
        format_path(stop.path),
        f"{stop.message} is not supported in a file over {MAX_DETAILED_BYTES:,} bytes",
        f"{stop.hint}, or {split}" if stop.hint else split,
    )


def _rt_parse(text: str, label: str) -> SourceDocument:
    """The detailed path: ruamel's round-trip loader, which locates and explains every problem."""
    from ruamel.yaml import YAML
    from ruamel.yaml.constructor import DuplicateKeyError
    from ruamel.yaml.error import MarkedYAMLError, YAMLError
    from ruamel.yaml.reader import ReaderError

    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        documents = list(yaml.load_all(text))
    except DuplicateKeyError as exc:
        raise FleetError([_duplicate_key_problem(label, text, exc)]) from None
    except MarkedYAMLError as exc:
        raise FleetError([_yaml_problem(label, exc)]) from None
    except ReaderError as exc:
        raise FleetError([_reader_problem(label, text, exc)]) from None
    except YAMLError as exc:
        message = " ".join(str(exc).split())
        raise FleetError([Problem(label, 0, 0, "", f"invalid YAML: {message}")]) from None
    except RecursionError:
        raise FleetError(
            [Problem(label, 0, 0, "", "nesting is too deep to parse", f"a fleet file nests at most {MAX_DEPTH} levels")]
        ) from None
    except ValueError as exc:
        raise FleetError([Problem(label, 0, 0, "", f"invalid YAML: {value_error_reason(exc)}")]) from None
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
            [Problem(label, 1, 1, "", "the file is empty", "start from `gpustack-gen init` or examples/fleet.yaml")]
        )
    bomb = _expansion_over_budget(documents[0])
    if bomb is not None:
        raise FleetError([_bomb_problem(label, documents[0], bomb)])
    builder = _Builder(label)
    data = builder.convert(documents[0], (), 0)
    if builder.problems:
        raise FleetError(builder.problems)
    if not isinstance(data, dict):
        line, column = _node_start(documents[0])
        raise FleetError(
            [
                Problem(
                    label,
                    line,
                    column,
                    "",
                    f"the top level is {value_kind(data)}; expected a mapping",
                    "a fleet file starts with apiVersion: gpustack-gen/v1alpha1, kind: Fleet and clusters:",
                )
            ]
        )
    builder.value_positions.setdefault((), (1, 1))
    return SourceDocument(label, data, builder.value_positions, builder.key_positions)


def _start_line(node: Any) -> int:
    lc = getattr(node, "lc", None)
    return int(lc.line) + 1 if lc is not None and lc.line is not None else 0


def _node_start(node: Any) -> tuple[int, int]:
    lc = getattr(node, "lc", None)
    if lc is not None and lc.line is not None:
        return int(lc.line) + 1, int(lc.col) + 1
    return 1, 1


_CLOSERS = {"[": "]", "{": "}"}


def _prescan(text: str, label: str) -> Problem | None:
    """Cheap checks before the parser: YAML version directive, and nesting that would exhaust the stack."""
    directive = _YAML_DIRECTIVE.search(text)
    if directive is not None and directive.group(1) != "1.2":
        return Problem(
            label,
            text.count("\n", 0, directive.start()) + 1,
            1,
            "",
            f"the %YAML {directive.group(1)} directive is not supported; fleet files are YAML 1.2",
            "remove the directive: YAML 1.1 would read yes/no/on/off as booleans and 1:30 or 017 as numbers",
        )
    if text.count("[") + text.count("{") <= MAX_DEPTH and text.count("\n") <= MAX_DEPTH:
        return None
    indents: list[int] = []
    flow = 0
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(stripped)
        if flow == 0:
            while indents and indents[-1] >= indent:
                indents.pop()
            indents.append(indent)
            dashes = 0
            rest = stripped
            while rest.startswith("- ") or rest == "-":
                dashes += 1
                rest = rest[2:].lstrip(" ")
            if len(indents) + dashes > MAX_DEPTH:
                return _too_deep(label, number, indent + 1)
        if _BRACKET.search(line) is None:
            continue  # the flow depth only changes at a bracket
        flow, where = _scan_flow(line, flow)
        if where:
            return _too_deep(label, number, where)
    return None


_BRACKET = re.compile(r"[\[\]{}]")
_FLOW_SIGNIFICANT = re.compile(r"[\"'#\[\]{}]")


def _scan_flow(line: str, flow: int) -> tuple[int, int]:
    """Track ``[`` / ``{`` depth through one line, skipping quoted text and comments; (depth, column if too deep).

    Only quotes, ``#`` and brackets matter, each with the character before it (a space at the start of the line).
    """
    quote = ""
    for match in _FLOW_SIGNIFICANT.finditer(line):
        char = match.group()
        index = match.start()
        if quote:
            if char == quote:
                quote = ""
            continue
        previous = line[index - 1] if index else " "
        if char in "'\"" and previous in " \t[{,:":
            quote = char
        elif char == "#" and previous in " \t":
            break
        elif char in _CLOSERS:
            flow += 1
            if flow > MAX_DEPTH:
                return flow, index + 1
        elif char in "]}":
            flow = max(0, flow - 1)
    return flow, 0


def _too_deep(label: str, line: int, column: int) -> Problem:
    return Problem(
        label,
        line,
        column,
        "",
        f"nesting deeper than {MAX_DEPTH} levels",
        "a fleet file is a few levels deep; look for runaway brackets or indentation",
    )


def _mark(mark: Any) -> tuple[int, int]:
    return (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)


def _yaml_problem(label: str, exc: Any) -> Problem:
    line, column = _mark(exc.problem_mark or exc.context_mark)
    problem = " ".join((exc.problem or "invalid YAML").split())
    problem = problem.replace("'<stream end>'", "the end of the file").replace("end of stream", "end of the file")
    context = " ".join((exc.context or "").split())
    hints: list[str] = []
    if "found character '\\t'" in problem or "\t" in problem:
        return Problem(
            label,
            line,
            column,
            "",
            "invalid YAML: a tab character is used for indentation",
            "YAML indents with spaces only",
        )
    if "mapping values are not allowed here" in problem:
        hints.append("quote a value that contains ': ', or check the indentation of this line")
    elif "undefined alias" in problem:
        name = problem.rsplit(" ", 1)[-1].strip("'")
        hints.append(f"define the anchor &{name} before this alias")
    elif "cannot start any token" in problem:
        hints.append("quote the value")
    elif "expected <block end>" in problem:
        hints.append("check the indentation: this line does not line up with the lines above it")
    if context and exc.context_mark is not None and exc.problem_mark is not None:
        what = context.removeprefix("while ").removeprefix("parsing ").removeprefix("scanning ").removeprefix("a ")
        if what and not what.startswith("for the next token") and _mark(exc.context_mark) != (line, column):
            context_line, context_column = _mark(exc.context_mark)
            hints.append(f"see the {what} that starts at line {context_line}, column {context_column}")
    return Problem(label, line, column, "", f"invalid YAML: {problem}", "; ".join(hints))


def _reader_problem(label: str, text: str, exc: Any) -> Problem:
    position = int(getattr(exc, "position", 0) or 0)
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    character = getattr(exc, "character", None)
    code = character if isinstance(character, int) else ord(character) if isinstance(character, str) else 0
    name = unicodedata.name(chr(code), "") if code else ""
    what = f"U+{code:04X}" + (f" ({name})" if name else "")
    return Problem(
        label,
        line,
        column,
        "",
        f"the file contains the control character {what}, which YAML does not allow",
        "remove it; a fleet file is plain text",
    )


def _duplicate_key_problem(label: str, text: str, exc: Any) -> Problem:
    """Say which key is repeated, on which two lines, and under which field path."""
    line, column = _mark(exc.problem_mark)
    found = _find_duplicate(text, _mark(exc.context_mark), (line, column))
    hint = "a key may appear once per mapping; remove one of them"
    if found is None:
        problem = " ".join((exc.problem or "duplicate key").split())
        return Problem(label, line, column, "", f"invalid YAML: {problem}", hint)
    path, key, first = found
    return Problem(
        label,
        line,
        column,
        format_path((*path, key)),
        f"duplicate key {key!r}: first at line {first[0]}, again at line {line}",
        hint,
    )


def _find_duplicate(
    text: str, mapping_at: tuple[int, int], key_at: tuple[int, int]
) -> tuple[PathKey, str, tuple[int, int]] | None:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    try:
        root = YAML(typ="rt").compose(text)  # composing builds nodes without the duplicate-key check
    except (YAMLError, RecursionError):
        return None
    seen: set[int] = set()
    stack: list[tuple[Any, PathKey]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            if _mark(node.start_mark) == mapping_at:
                keys = [k for k, _ in node.value]
                for k in keys:
                    if _mark(k.start_mark) == key_at:
                        first = next(o for o in keys if o.value == k.value)
                        return path, str(k.value), _mark(first.start_mark)
            stack.extend((v, (*path, str(k.value))) for k, v in node.value)
        elif isinstance(node, SequenceNode):
            stack.extend((v, (*path, i)) for i, v in enumerate(node.value))
    return None


def _expansion_over_budget(root: Any) -> str | None:
    """The top-level key whose value takes the document past ``MAX_NODES`` values once aliases are expanded.

    Sizes are memoised per node, so an alias bomb is measured in the time of its few distinct nodes rather
    than expanded; the builder's own count stays as a safety net.
    """
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    sizes: dict[int, int] = {}

    def size(node: Any, depth: int) -> int:
        if not isinstance(node, (CommentedMap, CommentedSeq)) or depth > MAX_DEPTH:
            return 1  # the builder refuses deeper nesting on its own
        known = sizes.get(id(node))
        if known is None:
            children = node.values() if isinstance(node, CommentedMap) else node
            known = 1 + sum(size(child, depth + 1) for child in children)
            sizes[id(node)] = known
        return known

    if not isinstance(root, CommentedMap):
        return "" if size(root, 0) > MAX_NODES else None
    total = 1
    for key, value in root.items():
        total += size(value, 1)
        if total > MAX_NODES:
            return str(key)
    return None


def _bomb_problem(label: str, root: Any, key: str) -> Problem:
    position = _positions(root, key)[0] if key else None
    line, column = (position[0] + 1, position[1] + 1) if position is not None else (1, 1)
    return Problem(
        label,
        line,
        column,
        format_path((key,)) if key else "",
        f"the document expands to more than {MAX_NODES:,} values (aliases included)",
        "an alias bomb, or a fleet too large for one file: split it",
    )


class _Builder:
    """Turns ruamel round-trip nodes into plain data, recording positions and refusing hostile shapes."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.value_positions: dict[PathKey, tuple[int, int]] = {}
        self.key_positions: dict[PathKey, tuple[int, int]] = {}
        self.problems: list[Problem] = []
        self.nodes = 0
        self._converted: set[int] = set()  # collections already converted: seen again, they came by alias
        self._in_alias = 0

    def _fail(self, path: PathKey, message: str, hint: str = "", *, key: bool = False) -> None:
        where = (self.key_positions.get(path) if key else None) or self.value_positions.get(path)
        line, column = where or self.key_positions.get(path) or (0, 0)
        self.problems.append(Problem(self.label, line, column, format_path(path), message, hint))

    def convert(self, node: Any, path: PathKey, depth: int) -> Any:
        from ruamel.yaml.comments import CommentedMap, CommentedSeq, CommentedSet, TaggedScalar
        from ruamel.yaml.scalarint import BinaryInt, HexInt, OctalInt, ScalarInt

        self.nodes += 1
        if self.nodes > MAX_NODES:
            if self.nodes == MAX_NODES + 1:
                # Report at the top-level key being expanded: the full path of an alias bomb is noise.
                self._fail(
                    path[:1],
                    f"the document expands to more than {MAX_NODES:,} values (aliases included)",
                    "an alias bomb, or a fleet too large for one file: split it",
                    key=True,
                )
            return None
        if depth > MAX_DEPTH:
            self._fail(path[:2], f"nesting deeper than {MAX_DEPTH} levels", "a fleet file is a few levels deep")
            return None
        tag = getattr(getattr(node, "tag", None), "value", None)
        if isinstance(node, (CommentedMap, CommentedSeq)) and tag:
            self._tag_problem(path, tag)
            return None
        if isinstance(node, (CommentedMap, CommentedSeq)):
            # The second and later uses of an anchored collection are located at the alias ('*name'), not at
            # the anchor: their children record no positions, so problems fall back to the alias's position.
            alias = id(node) in self._converted
            self._converted.add(id(node))
            self._in_alias += alias
            try:
                return (
                    self._mapping(node, path, depth) if isinstance(node, CommentedMap) else self._seq(node, path, depth)
                )
            finally:
                self._in_alias -= alias
        if isinstance(node, TaggedScalar):
            if tag == _STANDARD_TAG + "str":
                return str(node.value)
            self._tag_problem(path, tag or "?")
            return None
        if isinstance(node, (bytes, bytearray)):
            self._tag_problem(path, _STANDARD_TAG + "binary")
            return None
        if isinstance(node, CommentedSet):
            self._tag_problem(path, _STANDARD_TAG + "set")
            return None
        if isinstance(node, (OctalInt, HexInt, BinaryInt)):
            written = {OctalInt: f"0o{int(node):o}", HexInt: f"0x{int(node):x}", BinaryInt: f"0b{int(node):b}"}
            self._fail(
                path,
                f"the integer {written[type(node)]} is written in base {_base(node)}",
                f"write {int(node)} in decimal, or quote it if text was meant",
            )
            return int(node)
        if isinstance(node, ScalarInt):
            return self._plain_int(node, path)
        if isinstance(node, bool) or node is None:
            return node
        if isinstance(node, int):
            return int(node)
        if isinstance(node, float):
            return float(node)
        if isinstance(node, str):
            return str(node)
        # Dates are kept so that validation reports "expected a string" with a hint to quote them.
        return node

    def _seq(self, node: Any, path: PathKey, depth: int) -> list[Any]:
        items: list[Any] = []
        for index, value in enumerate(node):
            child = (*path, index)
            pos = node.lc.item(index)
            if pos is not None and not self._in_alias:
                self.value_positions[child] = (pos[0] + 1, pos[1] + 1)
            items.append(self.convert(value, child, depth + 1))
        return items

    def _mapping(self, node: Any, path: PathKey, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in node.items():
            key_pos, value_pos = _positions(node, key)
            if not isinstance(key, str) or type(key).__name__ == "TaggedScalar":
                self._key_problem(path, key, key_pos)
                continue
            child = (*path, str(key))
            if key_pos is not None and not self._in_alias:
                self.key_positions[child] = (key_pos[0] + 1, key_pos[1] + 1)
            if value_pos is not None and not self._in_alias:
                self.value_positions[child] = (value_pos[0] + 1, value_pos[1] + 1)
            result[str(key)] = self.convert(value, child, depth + 1)
        return result

    def _key_problem(self, path: PathKey, key: Any, key_pos: Any) -> None:
        line, column = (key_pos[0] + 1, key_pos[1] + 1) if key_pos is not None else self._near(path)
        if isinstance(key, (bool, int, float, datetime.date)) or key is None:
            shown = "null" if key is None else str(key).lower() if isinstance(key, bool) else str(key)
            message = (
                f"a mapping key must be a string, got {value_kind(key).replace('a ', 'the ', 1).replace('an ', 'the ', 1)} {shown}"
                if key is not None
                else "a mapping key must be a string, got null"
            )
            hint = f'quote it: "{shown}"'
        else:
            message = "a mapping key must be a plain string"
            hint = "complex keys ('? ...') and tagged keys are not used in a fleet file"
        self.problems.append(Problem(self.label, line, column, format_path(path), message, hint))

    def _near(self, path: PathKey) -> tuple[int, int]:
        return self.value_positions.get(path) or self.key_positions.get(path) or (0, 0)

    def _tag_problem(self, path: PathKey, tag: str) -> None:
        shown = "!!" + tag.removeprefix(_STANDARD_TAG) if tag.startswith(_STANDARD_TAG) else tag
        self._fail(path, f"the YAML tag {shown} is not allowed", "remove the tag and write the plain value")

    def _plain_int(self, node: Any, path: PathKey) -> int:
        value = int(node)
        width = getattr(node, "_width", None)
        if getattr(node, "_underscore", None):
            self._fail(
                path,
                "the integer is written with '_' separators (a YAML 1.1 form)",
                f"write {value} without separators",
            )
        elif width is not None and width > len(str(abs(value))) + (value < 0):
            written = f"{value:0{width}d}"
            self._fail(
                path,
                f"the integer {written} has a leading zero (YAML 1.1 reads it as octal)",
                f"write {value} without leading zeros, or quote it if text was meant",
            )
        return value


def _positions(node: Any, key: Any) -> tuple[Any, Any]:
    """Key and value positions; keys pulled in by a ``<<`` merge have none of their own."""
    try:
        return node.lc.key(key), node.lc.value(key)
    except KeyError:
        return None, None


def _base(node: Any) -> int:
    from ruamel.yaml.scalarint import BinaryInt, HexInt

    return 16 if isinstance(node, HexInt) else 2 if isinstance(node, BinaryInt) else 8
