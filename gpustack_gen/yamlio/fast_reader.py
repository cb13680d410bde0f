"""The fast path of ``source.py``: read an ordinary fleet file from parser events, or give up.

ruamel's round-trip loader is pure Python (about 120 KB/s). Here the parser runs in C (libyaml through
``ruamel.yaml.clib`` when it is importable, else ruamel's pure parser) and only emits events; this module
builds the plain data and the position tables from those events itself, with exactly the results of the
round-trip path for every valid fleet:

1. ``compose`` turns events into light nodes (``MapNode``, ``SeqNode``; scalars are already Python values), resolving
   plain scalars with ruamel's own YAML 1.2 resolver table. Aliases reuse the anchored node object, as ruamel's
   composer does, and carry the anchored node's position.
2. ``Walker`` turns the nodes into dicts and lists in the order and with the positions that the round-trip
   ``_Builder`` in ``source.py`` produces: merge keys (``<<``) after the explicit keys and without positions,
   the second use of an aliased collection without positions for its children, the same value count for the
   alias budget and the same depth limit.

Anything the round-trip path would treat specially raises ``GiveUp`` instead: a parse error, a duplicate key,
a tag, an anchored boolean, a non-string or complex key, an integer in any form but plain decimal, a float in
an unusual form, a timestamp, a directive, a tab, a control or line-separator character, a lone CR, too deep,
over the value budget, not exactly one document, or a top level that is not a mapping. ``GiveUp`` says where
and what, so that a file too large for the round-trip path can still be refused with a located problem.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, NamedTuple

from ..errors import value_kind
from ..gcpause import gc_paused
from .limits import MAX_DEPTH, MAX_NODES

PathKey = tuple[str | int, ...]
Position = tuple[int, int]

_TAG = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL, _MERGE = (_TAG + t for t in ("str", "int", "float", "bool", "null", "merge"))

# Characters the fast path does not take: what ruamel's reader refuses (control characters, surrogates, U+FFFE/F),
# plus the tab (libyaml accepts tabs in places where ruamel does not), NEL, LS and PS (line breaks to one parser,
# not to the other) and a byte-order mark inside the text. Both classes are written as the characters they
# match, not as the complement of what is allowed: a negated class over all of Unicode takes about 9 ms to
# compile, at every start (tests/yamlio/test_character_classes.py checks them against the allowed ranges).
_UNUSUAL_CHARACTER = re.compile("[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
_RUAMEL_NON_PRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")
_LONE_CR = re.compile("\r(?!\n)")
_DIRECTIVE = re.compile(r"^%", re.MULTILINE)
_DECIMAL = re.compile(r"(?:0|-?[1-9][0-9]{0,17})\Z")
_PLAIN_FLOAT = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z")
_BOOLEANS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_TOO_BIG_HINT = "an alias bomb, or a fleet too large for one file: split it"
# Parser events a document may take: keys and values, at most about twice the values the budget allows. This
# bounds the memory of a large hostile file (a flat list of 2 million scalars) before the walk measures aliases.
EVENT_BUDGET = 2 * MAX_NODES + 1
ITEMS_KEY = "clusters"  # the fleet's cluster list: its items are the unit of a re-read (reread.py)
ITEMS_PATH: PathKey = (ITEMS_KEY,)


class GiveUp(Exception):
    """The fast path stops here. ``supported`` is False for input that may be valid YAML but is not read fast."""

    def __init__(
        self,
        where: Position,
        message: str,
        hint: str = "",
        *,
        path: PathKey = (),
        supported: bool = True,
        error: Exception | None = None,
    ) -> None:
        super().__init__(message)
        self.line, self.column = where
        self.message = message
        self.hint = hint
        self.path = path
        self.supported = supported
        self.error = error  # a ruamel MarkedYAMLError, for the caller's usual wording


def fast_load(
    text: str, *, pure: bool = False
) -> tuple[dict[str, Any], dict[PathKey, Position], dict[PathKey, Position]]:
    """Plain data, value positions and key positions of a fleet text (BOM removed), or ``GiveUp``."""
    check_text(text)
    with gc_paused():
        return _load(text, pure)


def _load(text: str, pure: bool) -> tuple[dict[str, Any], dict[PathKey, Position], dict[PathKey, Position]]:
    _, root, _ = compose_document(text, pure)
    walker = Walker()
    data = walker.document(root)
    return data, walker.value_positions, walker.key_positions


def compose_document(
    text: str, pure: bool, *, aliases: list[tuple[int, str]] | None = None
) -> tuple[Composed, MapNode, int]:
    """A whole fleet text composed, its root mapping, and its size as the alias-bomb check counts it."""
    composed = compose(text, pure, aliases=aliases)
    root = _root_mapping(composed)
    return composed, root, _check_expansion(root)


def _root_mapping(composed: Composed) -> MapNode:
    if not isinstance(composed.root, MapNode):
        raise GiveUp(
            composed.position,
            f"the top level is {value_kind([] if isinstance(composed.root, SeqNode) else composed.root)}; expected a mapping",
            "a fleet file starts with apiVersion: gpustack-gen/v1alpha1, kind: Fleet and clusters:",
        )
    return composed.root


def expansion_sizer() -> Callable[[Any, int], int]:
    """``size(node, depth)``: the values ``node`` expands to, aliases included, counted once per distinct node.

    The count is an upper bound where ``<<`` merges override keys.
    """
    sizes: dict[int, int] = {}

    def size(node: Any, depth: int) -> int:
        if not isinstance(node, (MapNode, SeqNode)) or depth > MAX_DEPTH:
            return 1  # the walker refuses deeper nesting itself
        known = sizes.get(id(node))
        if known is None:
            if isinstance(node, SeqNode):
                children = [value for value, _ in node.items]
            else:
                children = [value for _, value, _ in node.entries.values()]
                if node.merge is not None:
                    children.append(node.merge[0])
            known = 1 + sum(size(child, depth + 1) for child in children)
            sizes[id(node)] = known
        return known

    return size


def _check_expansion(root: MapNode) -> int:
    """Refuse an alias bomb before expanding it (see ``expansion_sizer``); the document's size.

    It names the top-level key at which the document passes ``MAX_NODES``, as the walker and the round-trip
    reader do.
    """
    size = expansion_sizer()
    total = 1
    for key, (key_position, value, value_position) in root.entries.items():
        total += size(value, 1)
        if total > MAX_NODES:
            raise GiveUp(
                key_position or value_position or (1, 1),
                f"the document expands to more than {MAX_NODES:,} values (aliases included)",
                _TOO_BIG_HINT,
                path=(key,),
            )
    return total


def check_text(text: str) -> None:
    unusual = _UNUSUAL_CHARACTER.search(text)
    if unusual is not None:
        line, column = _text_position(text, unusual.start())
        char = unusual.group()
        if char == "\t":
            raise GiveUp((line, column), "a tab character", "replace it with spaces", supported=False)
        if _RUAMEL_NON_PRINTABLE.match(char):
            code = ord(char)
            name = unicodedata.name(char, "")
            what = f"U+{code:04X}" + (f" ({name})" if name else "")
            raise GiveUp(
                (line, column),
                f"the file contains the control character {what}, which YAML does not allow",
                "remove it; a fleet file is plain text",
            )
        raise GiveUp((line, column), f"the character U+{ord(char):04X}", "remove it", supported=False)
    lone_cr = _LONE_CR.search(text)
    if lone_cr is not None:
        line, column = _text_position(text, lone_cr.start())
        raise GiveUp(
            (line, column),
            "a carriage return without a line feed",
            "save the file with LF or CRLF line ends",
            supported=False,
        )
    directive = _DIRECTIVE.search(text)
    if directive is not None:
        line, _ = _text_position(text, directive.start())
        raise GiveUp((line, 1), "a % directive", "remove the directive", supported=False)


def _text_position(text: str, index: int) -> Position:
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1


def _mark(mark: Any) -> Position:
    return mark.line + 1, mark.column + 1


class SeqNode:
    """A sequence node: each item with the position of its own node (for an alias, the anchored node's)."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: list[tuple[Any, Position]] = []


class MapNode:
    """A mapping node: explicit entries ``key -> (key position, value, value position)`` and the ``<<`` value."""

    __slots__ = ("entries", "merge", "merged")

    def __init__(self) -> None:
        self.entries: dict[str, tuple[Position | None, Any, Position | None]] = {}
        self.merge: tuple[Any, Position] | None = None
        self.merged: dict[str, tuple[Position | None, Any, Position | None]] | None = None


@cache
def _resolvers() -> dict[Any, list[tuple[str, Any]]]:
    """ruamel's YAML 1.2 implicit resolvers, by first character: the table its round-trip loader uses."""
    from ruamel.yaml import YAML

    table: dict[Any, list[tuple[str, Any]]] = YAML(typ="rt").resolver.versioned_resolver
    return {first: list(entries) for first, entries in table.items()}


_GIVE_UP = object()


def _plain_scalar(value: str) -> Any:
    """The value of an untagged plain scalar, as the round-trip path builds it; ``_GIVE_UP`` where it differs."""
    tag = _resolve(value)
    if tag == _STR:
        return value
    if tag == _NULL:
        return None
    if tag == _BOOL:
        return _BOOLEANS[value]
    if tag == _INT:
        return int(value) if _DECIMAL.match(value) else _GIVE_UP
    if tag == _FLOAT:
        return float(value) if _PLAIN_FLOAT.match(value) else _GIVE_UP
    return _GIVE_UP  # a timestamp, '=', ...


def _resolve(value: str) -> str:
    """The tag ruamel's ``VersionedResolver.resolve`` gives an untagged plain scalar under YAML 1.2."""
    table = _resolvers()
    for tag, regexp in table.get(value[0] if value else "", []) + table.get(None, []):
        if regexp.match(value):
            return str(tag)
    return _STR


class _MergeKey:
    """The ``<<`` key: a plain scalar that the YAML 1.2 resolver tags as a merge."""


_MERGE_KEY = _MergeKey()


class Composed(NamedTuple):
    """What ``compose`` built: the root node and its position, every anchor, and the parser events it took."""

    root: Any
    position: Position
    anchors: dict[str, tuple[Any, Position]]
    events: int


def compose(
    text: str,
    pure: bool,
    *,
    seed: Mapping[str, tuple[Any, Position]] | None = None,
    aliases: list[tuple[int, str]] | None = None,
    outer_depth: int = 0,
) -> Composed:
    """Parser events to light nodes.

    ``seed``: anchors defined before ``text`` (an alias to one reuses its node); ``aliases`` collects each
    alias's line and anchor name; ``outer_depth``: the collections open around ``text`` (for the depth limit).
    """
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        return _compose_events(text, pure, seed, aliases, outer_depth)
    except GiveUp:
        raise
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = _mark(mark) if mark is not None else (0, 0)
        raise GiveUp((line, column), "invalid YAML", error=exc) from None
    except YAMLError as exc:
        raise GiveUp((0, 0), "invalid YAML: " + " ".join(str(exc).split())) from None
    except Exception as exc:  # whatever else a parser might raise: the round-trip path will say what it is
        raise GiveUp((0, 0), f"the parser stopped: {type(exc).__name__}", supported=False) from None


def _compose_events(
    text: str,
    pure: bool,
    seed: Mapping[str, tuple[Any, Position]] | None,
    aliases: list[tuple[int, str]] | None,
    outer_depth: int,
) -> Composed:
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=pure)
    _, parser = yaml.get_constructor_parser(text)
    try:
        # get_event, not YAML.parse: no generator per event
        return _build_nodes(iter(parser.get_event, None), seed, aliases, outer_depth)
    finally:
        parser.dispose()
        # ruamel's loader refers to itself and to the YAML object (a cycle that holds the whole text): cut it so
        # that reference counting frees them now; the collector may never see them (gc_paused freezes survivors).
        vars(parser).clear()
        vars(yaml).clear()


def _build_nodes(
    events: Any,
    seed: Mapping[str, tuple[Any, Position]] | None = None,
    aliases: list[tuple[int, str]] | None = None,
    outer_depth: int = 0,
) -> Composed:
    from ruamel.yaml.events import (
        AliasEvent,
        DocumentStartEvent,
        MappingEndEvent,
        MappingStartEvent,
        ScalarEvent,
        SequenceEndEvent,
        SequenceStartEvent,
    )

    anchors: dict[str, tuple[Any, Position]] = dict(seed) if seed else {}
    deepest = MAX_DEPTH - outer_depth
    stack: list[list[Any]] = []  # open collections: [node, pending key and its position or None, position]
    plain_values: dict[str, Any] = {}  # keys and enum-like values repeat: resolve each text once per file
    documents = 0
    root: Any = None
    root_position: Position = (1, 1)
    budget = EVENT_BUDGET
    for event in events:
        kind = type(event)
        budget -= 1
        if budget < 0:
            raise _over_budget(stack)
        if kind is ScalarEvent:
            position = (event.start_mark.line + 1, event.start_mark.column + 1)
            if event.tag is not None:
                raise _tag_give_up(event, position, stack)
            if event.implicit[0]:
                text_value = event.value
                if not text_value:
                    # An empty value: ruamel's round-trip parser places it by the next token and by comments.
                    raise GiveUp(
                        position, "an empty value", "write null, or remove the key", supported=False, path=_path(stack)
                    )
                node: Any = plain_values.get(text_value, _GIVE_UP)
                if node is _GIVE_UP:
                    node = _MERGE_KEY if text_value == "<<" else _plain_scalar(text_value)
                    if node is _GIVE_UP:
                        raise _scalar_give_up(text_value, position, stack)
                    plain_values[text_value] = node
                if event.anchor is not None:
                    if isinstance(node, bool):
                        raise GiveUp(
                            position, f"an anchored boolean ({text_value})", supported=False, path=_path(stack)
                        )
                    _anchor(anchors, event.anchor, node, position, stack)
            else:
                node = event.value
                if event.anchor is not None:
                    _anchor(anchors, event.anchor, node, position, stack)
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            position = (event.start_mark.line + 1, event.start_mark.column + 1)
            if event.tag is not None:
                raise _tag_give_up(event, position, stack)
            if len(stack) > deepest:
                raise GiveUp(
                    position,
                    f"nesting deeper than {MAX_DEPTH} levels",
                    "a fleet file is a few levels deep",
                    path=_path(stack)[:2],
                )
            node = MapNode() if kind is MappingStartEvent else SeqNode()
            if event.anchor is not None:
                _anchor(anchors, event.anchor, node, position, stack)
            stack.append([node, None, position])
            continue
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            frame = stack.pop()
            if frame[1] is not None:  # cannot happen: the parser pairs keys and values
                raise GiveUp(frame[2], "a key without a value", supported=False, path=_path(stack))
            node, position = frame[0], frame[2]
        elif kind is AliasEvent:
            found = anchors.get(event.anchor)
            if found is None:
                line, column = _mark(event.start_mark)
                raise GiveUp(
                    (line, column),
                    f"invalid YAML: found undefined alias {event.anchor!r}",
                    f"define the anchor &{event.anchor} before this alias",
                    path=_path(stack),
                )
            node, position = found
            if aliases is not None:
                aliases.append((event.start_mark.line + 1, event.anchor))
        else:
            if kind is DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise GiveUp(
                        (event.start_mark.line + 1, 1),
                        "found several YAML documents; a fleet file holds exactly one",
                        "remove the '---' separators, or put each fleet in its own file",
                    )
            continue
        if stack:
            _attach(stack, node, position)
        else:
            root, root_position = node, position
    if documents == 0 or root is None:
        raise GiveUp((1, 1), "the file is empty", "start from `gpustack-gen init` or examples/fleet.yaml")
    if root is _MERGE_KEY:
        raise GiveUp(root_position, "the merge key << as the whole document", supported=False)
    return Composed(root, root_position, anchors, EVENT_BUDGET - budget)


def _over_budget(stack: list[list[Any]]) -> GiveUp:
    path = _path(stack)[:1]
    frame = stack[0] if stack else None
    pending = frame[1] if frame is not None else None
    where = pending[1] if pending is not None and path else (1, 1)
    return GiveUp(
        where, f"the document expands to more than {MAX_NODES:,} values (aliases included)", _TOO_BIG_HINT, path=path
    )


def _anchor(
    anchors: dict[str, tuple[Any, Position]], name: str, node: Any, position: Position, stack: list[list[Any]]
) -> None:
    if name in anchors:  # allowed, but the round-trip loader warns about it
        raise GiveUp(
            position,
            f"the anchor &{name} defined a second time",
            "rename one of them",
            supported=False,
            path=_path(stack),
        )
    anchors[name] = (node, position)


def _path(stack: list[list[Any]]) -> PathKey:
    """The field path of the innermost open collection's next child (for locating a problem)."""
    path: list[str | int] = []
    for frame in stack:
        node, pending = frame[0], frame[1]
        if type(node) is SeqNode:
            path.append(len(node.items))
        elif pending is not None and isinstance(pending[0], str):
            path.append(pending[0])
    return tuple(path)


def _attach(stack: list[list[Any]], node: Any, position: Position) -> None:
    frame = stack[-1]
    parent = frame[0]
    if type(parent) is SeqNode:
        if node is _MERGE_KEY:
            raise GiveUp(position, "the merge key << as a value", supported=False, path=_path(stack))
        parent.items.append((node, position))
        return
    pending = frame[1]
    if pending is None:  # a key
        if isinstance(node, str) or node is _MERGE_KEY:
            frame[1] = (node, position)
            return
        raise _key_give_up(node, position, _path(stack))
    key, key_position = pending
    if node is _MERGE_KEY:
        raise GiveUp(position, "the merge key << as a value", supported=False, path=_path(stack))
    if key is _MERGE_KEY:
        if parent.merge is not None:
            raise GiveUp(
                key_position,
                'invalid YAML: found duplicate merge key "<<"',
                "a mapping takes one merge key",
                path=_path(stack),
            )
        parent.merge = (node, key_position)
        frame[1] = None
        return
    entries = parent.entries
    if key in entries:
        first = entries[key][0]
        raise GiveUp(
            key_position,
            f"duplicate key {key!r}: first at line {first[0] if first else 0}, again at line {key_position[0]}",
            "a key may appear once per mapping; remove one of them",
            path=_path(stack),
        )
    entries[key] = (key_position, node, position)
    frame[1] = None


def _tag_give_up(event: Any, position: Position, stack: list[list[Any]]) -> GiveUp:
    tag = str(event.tag)
    shown = "!!" + tag.removeprefix(_TAG) if tag.startswith(_TAG) else tag
    return GiveUp(
        position,
        f"the YAML tag {shown} is not allowed",
        "remove the tag and write the plain value",
        supported=tag != _STR,
        path=_path(stack),
    )


def _scalar_give_up(value: str, position: Position, stack: list[list[Any]]) -> GiveUp:
    tag = _resolve(value)
    if tag == _INT:
        return GiveUp(
            position,
            f"the integer {value} is not written in plain decimal",
            "write it in decimal, without a sign, separators or leading zeros, or quote it if text was meant",
            path=_path(stack),
        )
    what = "the date" if tag == _TAG + "timestamp" else "the value"
    return GiveUp(position, f"{what} {value}", "quote it if text was meant", supported=False, path=_path(stack))


def _key_give_up(node: Any, position: Position, path: PathKey) -> GiveUp:
    if isinstance(node, (MapNode, SeqNode)):
        return GiveUp(
            position,
            "a mapping key must be a plain string",
            "complex keys ('? ...') and tagged keys are not used in a fleet file",
            path=path,
        )
    shown = "null" if node is None else str(node).lower() if isinstance(node, bool) else str(node)
    return GiveUp(position, f"a mapping key must be a string, got {shown}", f'quote it: "{shown}"', path=path)


class Walker:
    """Nodes to plain data and positions, in the order and with the positions of the round-trip ``_Builder``.

    For a later re-read (``reread.py``) it can note when each of ``anchored`` (ids of anchored collections) is
    first converted and, in ``item_starts``, the count of values before each item of the cluster list and
    after the last: the count is the walk's clock.
    """

    def __init__(
        self,
        *,
        nodes: int = 1,
        converted: set[int] | None = None,
        anchored: dict[int, int | None] | None = None,
        item_starts: list[int] | None = None,
    ) -> None:
        self.value_positions: dict[PathKey, Position] = {}
        self.key_positions: dict[PathKey, Position] = {}
        self.nodes = nodes  # values counted so far: 1 is the root mapping
        # Collections already converted: seen again, they came by alias.
        self.converted: set[int] = converted if converted is not None else set()
        self.anchored = anchored
        self.item_starts = item_starts
        self._in_alias = 0
        self._merging: set[int] = set()

    def _count(self, path: PathKey, depth: int) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            line, column = self.key_positions.get(path[:1]) or self.value_positions.get(path[:1]) or (1, 1)
            raise GiveUp(
                (line, column),
                f"the document expands to more than {MAX_NODES:,} values (aliases included)",
                _TOO_BIG_HINT,
                path=path[:1],
            )
        if depth > MAX_DEPTH:
            line, column = self.value_positions.get(path[:2]) or self.key_positions.get(path[:2]) or (0, 0)
            raise GiveUp(
                (line, column),
                f"nesting deeper than {MAX_DEPTH} levels",
                "a fleet file is a few levels deep",
                path=path[:2],
            )

    def document(self, root: MapNode) -> dict[str, Any]:
        """The whole document's data; the root's position is the file's start when it has no other."""
        data = self.mapping(root, (), 0)
        self.value_positions.setdefault((), (1, 1))
        return data

    def mapping(self, node: MapNode, path: PathKey, depth: int) -> dict[str, Any]:
        alias = id(node) in self.converted
        if not alias and self.anchored is not None and id(node) in self.anchored:
            self.anchored[id(node)] = self.nodes
        self.converted.add(id(node))
        self._in_alias += alias
        record = not self._in_alias
        entries = node.entries if node.merge is None else self._merged(node, path)
        result: dict[str, Any] = {}
        key_positions = self.key_positions
        value_positions = self.value_positions
        child_depth = depth + 1
        for key, (key_position, value, value_position) in entries.items():
            child = (*path, key)
            if record and key_position is not None:
                key_positions[child] = key_position
                value_positions[child] = value_position  # type: ignore[assignment]
            kind = type(value)
            if kind is MapNode:
                self._count(child, child_depth)
                result[key] = self.mapping(value, child, child_depth)
            elif kind is SeqNode:
                self._count(child, child_depth)
                result[key] = self.sequence(value, child, child_depth)
            else:
                self.nodes += 1
                if self.nodes > MAX_NODES or child_depth > MAX_DEPTH:
                    self.nodes -= 1
                    self._count(child, child_depth)
                result[key] = value
        self._in_alias -= alias
        return result

    def sequence(self, node: SeqNode, path: PathKey, depth: int, first_index: int = 0) -> list[Any]:
        """``first_index``: the index of the first item (``reread.py`` walks a run of the cluster list)."""
        alias = id(node) in self.converted
        if not alias and self.anchored is not None and id(node) in self.anchored:
            self.anchored[id(node)] = self.nodes
        self.converted.add(id(node))
        self._in_alias += alias
        record = not self._in_alias
        starts = self.item_starts if self.item_starts is not None and path == ITEMS_PATH else None
        result: list[Any] = []
        value_positions = self.value_positions
        child_depth = depth + 1
        for index, (value, position) in enumerate(node.items, first_index):
            if starts is not None:
                starts.append(self.nodes)
            child = (*path, index)
            if record:
                value_positions[child] = position
            kind = type(value)
            if kind is MapNode:
                self._count(child, child_depth)
                result.append(self.mapping(value, child, child_depth))
            elif kind is SeqNode:
                self._count(child, child_depth)
                result.append(self.sequence(value, child, child_depth))
            else:
                self.nodes += 1
                if self.nodes > MAX_NODES or child_depth > MAX_DEPTH:
                    self.nodes -= 1
                    self._count(child, child_depth)
                result.append(value)
        if starts is not None:
            starts.append(self.nodes)
        self._in_alias -= alias
        return result

    def _merged(self, node: MapNode, path: PathKey) -> dict[str, tuple[Position | None, Any, Position | None]]:
        """Explicit entries, then those of each merged mapping in order that are not there yet (ruamel rt)."""
        if node.merged is not None:
            return node.merged
        assert node.merge is not None
        if id(node) in self._merging:
            line, column = node.merge[1]
            raise GiveUp((line, column), "a mapping that merges itself", supported=False, path=path)
        self._merging.add(id(node))
        source, where = node.merge
        if type(source) is MapNode:
            sources = [source]
        elif type(source) is SeqNode and all(type(item) is MapNode for item, _ in source.items):
            sources = [item for item, _ in source.items]
        else:
            raise GiveUp(
                where,
                "invalid YAML: expected a mapping or list of mappings for merging",
                "merge (<<) a mapping or a list of mappings",
                path=path,
            )
        merged = dict(node.entries)
        for mapping in sources:
            entries = mapping.entries if mapping.merge is None else self._merged(mapping, path)
            for key, (_, value, _) in entries.items():
                if key not in merged:
                    merged[key] = (None, value, None)
        self._merging.discard(id(node))
        node.merged = merged
        return merged
