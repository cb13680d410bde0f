"""Read a second version of a fleet file by parsing only the clusters that differ from the first.

``diff`` and ``plan`` read two versions of one fleet, which mostly agree, and a full read of the second
was most of their time. :func:`keep_reading` reads a text in full (the fast path of ``fast_reader.py``)
and keeps what a later :func:`reread` needs. :func:`reread` takes the lines both texts start with and
end with, parses only the run of cluster-list items that holds the other lines, on its own, and splices
it into the first document. The other items are the first document's objects. Their positions are the
first's, moved by the lines added or removed. The result is what a full read of the second text gives
(``tests/yamlio/test_reread.py`` checks this on generated edits). Where that cannot be shown,
:func:`reread` returns None and the caller reads the text in full, which also words any problem.

It returns None for: a change outside the cluster list, or a list in flow style or anchored; a run
whose first line is not an item's dash, or whose last line goes on into the next item; a line in the
run, other than a dash or a comment, indented at or left of the dashes (it may close the list); runs
longer together than the text (a full read is cheaper); an anchor of the old run aliased after it, or
defined again after it by the new run; an alias in either run to a collection that the full walk would
first convert there (it places that collection's values); a CR; a budget (events, values) that the whole
would pass; and an old run that does not read back as the first document had it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from ..gcpause import gc_paused
from .fast_reader import (
    EVENT_BUDGET,
    ITEMS_KEY,
    ITEMS_PATH,
    Composed,
    GiveUp,
    MapNode,
    SeqNode,
    Walker,
    check_text,
    compose,
    compose_document,
    expansion_sizer,
)
from .limits import MAX_NODES

PathKey = tuple[str | int, ...]
Position = tuple[int, int]

_ITEM_START = re.compile(r"( *)- +(?=[^\s#])")  # an item's dash with its node on the same line
_DASH = re.compile(r"-(?: |\Z)")  # a dash that starts an item (the line's indentation removed)
_CHUNK = 1 << 16  # characters compared at a time while looking for the first and last difference


@dataclass
class Reading:
    """What a full read of a fleet text leaves for :func:`reread`; empty once :meth:`release` is called."""

    text: str
    data: dict[str, Any]
    value_positions: Mapping[PathKey, Position]
    key_positions: Mapping[PathKey, Position]
    item_positions: list[Position]  # each cluster item's position: its dash starts the line
    items_end_line: int | None  # the line of the top-level key after the cluster list; None: the list ends the text
    item_starts: list[int]  # the walk's value count before each item and after the last
    nodes: int  # values of the document, as the walk counts them
    events: int  # parser events of the document
    expansion: int  # values of the document, as the alias-bomb check counts them
    anchors: dict[str, tuple[Any, Position]]  # every anchor: its node and position
    aliases: list[tuple[int, str]]  # each alias's line and anchor name
    first_converted: dict[int, int | None]  # anchored collection -> value count when the walk first converted it
    converted: set[int]  # collections in anchored subtrees that the walk converted
    _released: list[Callable[[], None]] = field(default_factory=list)

    def when_released(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when this reading is released: what its owner kept for the re-read goes with it."""
        self._released.append(callback)

    def release(self) -> None:
        """Free what the reading holds (before a full read of the second text, which needs the memory)."""
        callbacks, self._released = self._released, []
        self.text, self.data, self.value_positions, self.key_positions = "", {}, {}, {}
        self.anchors, self.aliases, self.first_converted, self.converted = {}, [], {}, set()
        for callback in callbacks:
            callback()


@dataclass(frozen=True)
class Reread:
    """A re-read document: data and positions, and the cluster indexes whose items are the first's objects."""

    data: dict[str, Any]
    value_positions: Mapping[PathKey, Position]
    key_positions: Mapping[PathKey, Position]
    kept_items: frozenset[int]


def keep_reading(
    text: str,
) -> tuple[dict[str, Any], dict[PathKey, Position], dict[PathKey, Position], Reading | None]:
    """``fast_load`` of ``text`` (same result, same ``GiveUp``), and a :class:`Reading` when it can be re-read."""
    check_text(text)
    aliases: list[tuple[int, str]] = []
    with gc_paused():
        composed, root, expansion = compose_document(text, False, aliases=aliases)
        anchored: dict[int, int | None] = {
            id(node): None for node, _ in composed.anchors.values() if isinstance(node, MapNode | SeqNode)
        }
        walker = Walker(anchored=anchored, item_starts=[])
        data = walker.document(root)
        reading = _reading(text, data, root, composed, walker, expansion, aliases)
    return data, walker.value_positions, walker.key_positions, reading


def _reading(
    text: str,
    data: dict[str, Any],
    root: MapNode,
    composed: Composed,
    walker: Walker,
    expansion: int,
    aliases: list[tuple[int, str]],
) -> Reading | None:
    entry = root.entries.get(ITEMS_KEY)
    items = data.get(ITEMS_KEY)
    if root.merge is not None or entry is None or type(entry[1]) is not SeqNode or "\r" in text:
        return None
    if not isinstance(items, list) or not items or walker.item_starts is None:
        return None
    if any(node is entry[1] for node, _ in composed.anchors.values()):  # an alias would repeat the old list
        return None
    if len(walker.item_starts) != len(items) + 1:  # the list was walked more than once: it is aliased
        return None
    found = [walker.value_positions.get((ITEMS_KEY, index)) for index in range(len(items))]
    item_positions = [position for position in found if position is not None]
    if len(item_positions) != len(items):
        return None
    item_lines = [line for line, _ in item_positions]
    if any(a >= b for a, b in pairwise(item_lines)):
        return None
    keys = list(root.entries)
    after = keys.index(ITEMS_KEY) + 1
    end_line = None
    if after < len(keys):
        next_key = root.entries[keys[after]][0]
        if next_key is None or next_key[0] <= item_lines[-1]:
            return None
        end_line = next_key[0]
    assert walker.anchored is not None
    return Reading(
        text=text,
        data=data,
        value_positions=walker.value_positions,
        key_positions=walker.key_positions,
        item_positions=item_positions,
        items_end_line=end_line,
        item_starts=walker.item_starts,
        nodes=walker.nodes,
        events=composed.events,
        expansion=expansion,
        anchors=composed.anchors,
        aliases=aliases,
        first_converted=walker.anchored,
        converted=_converted_in_anchored(composed.anchors, walker.converted),
    )


def _converted_in_anchored(anchors: Mapping[str, tuple[Any, Position]], converted: set[int]) -> set[int]:
    """The collections under anchored nodes that the walk converted: a re-read walks them again by alias."""
    kept: set[int] = set()
    seen: set[int] = set()
    stack = [node for node, _ in anchors.values()]
    while stack:
        node = stack.pop()
        if not isinstance(node, MapNode | SeqNode) or id(node) in seen:
            continue
        seen.add(id(node))
        if id(node) in converted:
            kept.add(id(node))
        if isinstance(node, SeqNode):
            stack.extend(value for value, _ in node.items)
        else:
            stack.extend(value for _, value, _ in node.entries.values())
            if node.merge is not None:
                stack.append(node.merge[0])
    return kept


def reread(reading: Reading, text: str) -> Reread | None:
    """``text`` read as a full read would, reusing ``reading`` where the texts agree; None where not shown."""
    if not reading.text:
        return None
    try:
        with gc_paused():
            return _reread(reading, text)
    except GiveUp:  # the full read stops at the same place and says why
        return None


def _reread(reading: Reading, text: str) -> Reread | None:
    old = reading.text
    items = reading.data[ITEMS_KEY]
    if old == text:
        return Reread(reading.data, reading.value_positions, reading.key_positions, frozenset(range(len(items))))
    span = _changed_lines(old, text)
    first_line, start, old_end_line, old_end = span  # the old text's lines first_line..old_end_line-1 differ
    lines = [line for line, _ in reading.item_positions]
    first = bisect.bisect_right(lines, first_line) - 1  # the item that holds the first changed line
    if first < 0:
        return None
    if first > 0 and first_line == lines[first] and _item_indent(text, start, reading.item_positions[first]) is None:
        first -= 1  # lines added at the end of the item before: the run starts with that item
    last = max(first, bisect.bisect_left(lines, old_end_line) - 1)  # the item that holds the last one
    run_end_line = lines[last + 1] if last + 1 < len(lines) else reading.items_end_line
    if run_end_line is not None and old_end_line > run_end_line:
        return None
    run_start = _line_back(old, start, first_line - lines[first])
    if run_end_line is None:
        old_run_end = len(old)
    else:
        found = _line_forward(old, old_end, run_end_line - old_end_line)
        if found is None:
            return None
        old_run_end = found
    new_run_end = old_run_end + len(text) - len(old)
    if new_run_end < len(text) and text[new_run_end - 1] != "\n":  # the run's last line goes on past it
        return None
    if (old_run_end - run_start) + (new_run_end - run_start) > len(text):
        return None  # both runs are read: more than reading the text in full
    indent = _item_indent(old, run_start, reading.item_positions[first])
    if indent is None:
        return None
    if last + 1 < len(lines) and _item_indent(old, old_run_end, reading.item_positions[last + 1]) != indent:
        return None
    new_run = text[run_start:new_run_end]
    # The rest of the text is the first one's, which passed these checks (and held no CR): only the run is new.
    if "\r" in new_run:
        return None
    check_text(new_run)
    if new_run and not _stays_in_list(new_run, indent):
        return None
    if not new_run and last + 1 - first == len(lines):  # the whole list removed: the key would hold null
        return None
    start_line = lines[first]
    seed = {name: anchor for name, anchor in reading.anchors.items() if anchor[1][0] < start_line}
    old_aliases: list[tuple[int, str]] = []
    new_aliases: list[tuple[int, str]] = []
    padding = "\n" * (start_line - 1)  # the run parses on its own lines, so its positions need no shift
    old_composed = compose(padding + old[run_start:old_run_end], False, seed=seed, aliases=old_aliases, outer_depth=1)
    if type(old_composed.root) is not SeqNode:
        return None
    if new_run:
        new_composed = compose(padding + new_run, False, seed=seed, aliases=new_aliases, outer_depth=1)
        if type(new_composed.root) is not SeqNode:
            return None
    else:  # items removed, none written: no values added, and the old run's events (its items' and the
        # stream, document and list events around them) all kept in the count, an upper bound
        new_composed = Composed(SeqNode(), (start_line, 1), dict(seed), old_composed.events)
    after_run = run_end_line if run_end_line is not None else old.count("\n") + 2
    if not _anchors_stay(reading, seed, new_composed, old_aliases + new_aliases, start_line, after_run, first):
        return None
    events = reading.events - old_composed.events + new_composed.events
    old_size, new_size = expansion_sizer(), expansion_sizer()
    expansion = (
        reading.expansion
        - sum(old_size(item, 2) for item, _ in old_composed.root.items)
        + sum(new_size(item, 2) for item, _ in new_composed.root.items)
    )
    if events > EVENT_BUDGET or expansion > MAX_NODES:
        return None
    start_count = reading.item_starts[first]
    old_walker = Walker(nodes=start_count, converted=set(reading.converted))
    if repr(old_walker.sequence(old_composed.root, ITEMS_PATH, 1, first)) != repr(items[first : last + 1]):
        return None
    walker = Walker(nodes=start_count, converted=set(reading.converted))
    new_items = walker.sequence(new_composed.root, ITEMS_PATH, 1, first)
    if walker.nodes + reading.nodes - reading.item_starts[last + 1] > MAX_NODES:
        return None
    old_count, new_count = last + 1 - first, len(new_items)
    line_shift = text.count("\n", start, new_run_end) - old.count("\n", start, old_run_end)
    splice = _Splice(first, old_count, new_count, after_run, line_shift)
    data = dict(reading.data)
    data[ITEMS_KEY] = [*items[:first], *new_items, *items[last + 1 :]]
    kept = set(range(first))
    if old_count == new_count:
        kept.update(range(first + new_count, len(data[ITEMS_KEY])))
    return Reread(
        data,
        _SplicedPositions(reading.value_positions, walker.value_positions, splice),
        _SplicedPositions(reading.key_positions, walker.key_positions, splice),
        frozenset(kept),
    )


def _changed_lines(old: str, new: str) -> tuple[int, int, int, int]:
    """The old text's differing lines: first line and its offset, the line after the last and its offset."""
    prefix = _common_prefix(old, new)
    suffix = _common_suffix(old, new, min(len(old), len(new)) - prefix)
    start = old.rfind("\n", 0, prefix) + 1
    end = len(old) - suffix
    if end > 0 and old[end - 1] != "\n":
        found = old.find("\n", end)
        end = len(old) if found < 0 else found + 1
    first_line = old.count("\n", 0, start) + 1
    after = first_line + old.count("\n", start, end) + (end == len(old) > start and not old.endswith("\n"))
    return first_line, start, after, end


def _common_prefix(a: str, b: str) -> int:
    """The length of the longest text both start with: whole chunks compared, then a binary search in one."""
    limit = min(len(a), len(b))
    at = 0
    while at + _CHUNK <= limit and a[at : at + _CHUNK] == b[at : at + _CHUNK]:
        at += _CHUNK
    low, high = at, min(at + _CHUNK, limit)
    while low < high:
        middle = (low + high + 1) // 2
        if a[at:middle] == b[at:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(a: str, b: str, limit: int) -> int:
    """The length of the longest text both end with, at most ``limit``."""
    size = 0
    while (
        size + _CHUNK <= limit
        and a[len(a) - size - _CHUNK : len(a) - size] == b[len(b) - size - _CHUNK : len(b) - size]
    ):
        size += _CHUNK
    low, high = size, min(size + _CHUNK, limit)
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle : len(a) - size] == b[len(b) - middle : len(b) - size]:
            low = middle
        else:
            high = middle - 1
    return low


def _line_back(text: str, offset: int, lines: int) -> int:
    for _ in range(lines):
        offset = text.rfind("\n", 0, offset - 1) + 1
    return offset


def _line_forward(text: str, offset: int, lines: int) -> int | None:
    for _ in range(lines):
        found = text.find("\n", offset)
        if found < 0:
            return None
        offset = found + 1
    return offset


def _item_indent(text: str, offset: int, position: Position) -> int | None:
    """The indentation of the dash that starts the line at ``offset``, if the item at ``position`` follows it."""
    match = _ITEM_START.match(text, offset)
    if match is None or match.end() - offset + 1 != position[1]:
        return None
    return len(match.group(1))


def _stays_in_list(run: str, indent: int) -> bool:
    """Whether ``run`` starts with an item's dash at ``indent`` and every other line that the list's indentation
    could end (indented at or left of the dashes) is a dash at it, a comment or blank."""
    lines = run.split("\n")
    start = _ITEM_START.match(lines[0])
    if start is None or len(start.group(1)) != indent:
        return False
    for line in lines[1:]:
        content = line.lstrip(" ")
        depth = len(line) - len(content)
        if depth > indent or not content or content.startswith("#"):
            continue
        if depth < indent or _DASH.match(content) is None:
            return False
    return True


def _anchors_stay(
    reading: Reading,
    seed: Mapping[str, tuple[Any, Position]],
    new: Composed,
    run_aliases: list[tuple[int, str]],
    start_line: int,
    after_run: int,
    first: int,
) -> bool:
    """Whether the anchors mean the same around the new run as around the old one (see the module's list)."""
    for line, name in reading.aliases:
        if line >= after_run and start_line <= reading.anchors[name][1][0] < after_run:
            return False
    later = {name for name, (_, position) in reading.anchors.items() if position[0] >= after_run}
    if any(name in later for name in new.anchors if name not in seed):
        return False
    before = reading.item_starts[first]
    for _, name in run_aliases:  # of the old run too: without it, the first conversion would move later
        if name in seed and isinstance(seed[name][0], MapNode | SeqNode):
            converted = reading.first_converted.get(id(seed[name][0]))
            if converted is None or converted > before:
                return False
    return True


@dataclass(frozen=True)
class _Splice:
    """Where the new run sits: items ``first``.. (``old_count`` of them before, ``new_count`` now); the old
    text's lines from ``after_run`` on move by ``line_shift``."""

    first: int
    old_count: int
    new_count: int
    after_run: int
    line_shift: int


class _SplicedPositions(Mapping[PathKey, Position]):
    """The first document's positions with the new run's in place of the old run's, read through."""

    def __init__(self, old: Mapping[PathKey, Position], run: dict[PathKey, Position], splice: _Splice) -> None:
        self._old = old
        self._run = run
        self._splice = splice

    def _old_path(self, path: PathKey) -> PathKey | None:
        """The path in the first document, or None for a path in the new run."""
        splice = self._splice
        if len(path) < 2 or path[0] != ITEMS_KEY or type(path[1]) is not int or path[1] < splice.first:
            return path
        index = path[1]
        if index < splice.first + splice.new_count:
            return None
        return (ITEMS_KEY, index - splice.new_count + splice.old_count, *path[2:])

    def __getitem__(self, path: PathKey) -> Position:
        old_path = self._old_path(path)
        if old_path is None:
            return self._run[path]
        line, column = self._old[old_path]
        return (line + self._splice.line_shift, column) if line >= self._splice.after_run else (line, column)

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, tuple):
            return False
        old_path = self._old_path(path)
        return path in self._run if old_path is None else old_path in self._old

    def __iter__(self) -> Iterator[PathKey]:
        splice = self._splice
        for path in self._old:
            if len(path) < 2 or path[0] != ITEMS_KEY or type(path[1]) is not int or path[1] < splice.first:
                yield path
            elif path[1] >= splice.first + splice.old_count:
                yield (ITEMS_KEY, path[1] - splice.old_count + splice.new_count, *path[2:])
        yield from self._run

    def __len__(self) -> int:
        return sum(1 for _ in self)
