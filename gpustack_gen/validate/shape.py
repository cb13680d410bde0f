"""A document's shape under a schema: its data with every value whose verdict cannot depend on it left out.

Two documents of one shape are valid or invalid together, so the validators check a shape once per process.
Left out, where the schema (annotations aside; ``format`` is one, as validators run without a format
checker) looks only at a value's type:

- a string (``...``) or an integer (``("#",)``; not a float, which ``"integer"`` accepts when whole)
  whose schema has ``type`` alone, or a ``oneOf``/``anyOf`` of such schemas;
- an object or array under such a schema (``("{~",)``, ``("[~",)``): nothing below it is looked at;
- the key names of a map whose schema is ``additionalProperties`` alone (no ``properties``, no
  ``required``): every entry gets the same schema, and their number is kept.

A value is left out only when every schema above it looks at its own object's keys and its children one
by one (``properties``, ``additionalProperties``, ``items``, ``required``, counts and ``type``): no
``enum``, ``const``, ``uniqueItems``, ``oneOf`` or other keyword that compares or re-reads what is below
it. Everything else is kept exactly, with its type (``repr`` tells ``1`` from ``True``). A shape says only
whether the document is valid: the findings of an invalid one are computed from the document itself, so
that each names its own values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

_ANNOTATIONS = frozenset(
    {
        "description",
        "title",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        "$schema",
        "$id",
        "$comment",
    }
)
_OBJECT_KEYWORDS = frozenset(
    {"type", "properties", "additionalProperties", "required", "minProperties", "maxProperties"}
)
_ARRAY_KEYWORDS = frozenset({"type", "items", "minItems", "maxItems"})
_SCALARS = (str, int, bool, float, type(None))
_FREE_INTEGER = ("#",)


class ValidShapes:
    """Which shapes passed, per schema: a memo of verdicts, bounded (once full, new shapes are not kept)."""

    def __init__(self, size: int) -> None:
        self._verdicts: dict[tuple[Any, ...], bool] = {}
        self._size = size

    def passed(self, key: tuple[Any, ...]) -> bool | None:
        return self._verdicts.get(key)

    def remember(self, key: tuple[Any, ...], passed: bool) -> None:
        if len(self._verdicts) < self._size:
            self._verdicts.setdefault(key, passed)

    def clear(self) -> None:
        self._verdicts.clear()

    def __len__(self) -> int:
        return len(self._verdicts)


class NotPlain(Exception):
    """The document holds something other than plain JSON data: it has no shape."""


def checked_by_shape(
    memo: ValidShapes, scope: tuple[Any, ...], schema: Any, document: Any, check: Callable[[], list[T]]
) -> list[T]:
    """``check()``, the findings of ``document`` under ``schema``; [] at once when one of its shape passed."""
    try:
        key = (*scope, shape_key(document, schema))
    except NotPlain:
        return check()
    passed = memo.passed(key)
    if passed:
        return []
    findings = check()
    if passed is None:
        memo.remember(key, not findings)
    return findings


def shape_key(document: Any, schema: Any) -> str:
    """The shape of ``document`` under ``schema`` (a draft 2020-12 schema with its references inlined)."""
    return repr(_shape(document, schema))


def schema_at(schema: Any, path: tuple[object, ...]) -> Any:
    """The schema ``shape_key`` judges the value at ``path`` of a document by: the shape of a document is
    made of its values' shapes under these. None (the value kept exactly) also where a schema above leaves
    the whole value out: a shape finer than the document's own, never coarser."""
    for step in path:
        if schema is None:
            return None
        plan = _plan(schema)
        if plan.free_scalar:
            return None
        if isinstance(step, int):
            schema = plan.items
        elif not isinstance(step, str):
            return None
        elif plan.map_only:
            schema = plan.extra
        elif plan.properties is None:
            return None
        else:
            schema = plan.properties.get(step, plan.extra)
    return schema


def _keywords(schema: Any) -> tuple[Mapping[str, Any] | None, frozenset[str]]:
    """The schema with a lone ``allOf: [target]`` beside annotations followed, and its validating keywords."""
    while isinstance(schema, Mapping):
        keywords = frozenset(k for k in schema if k not in _ANNOTATIONS and not k.startswith("x-"))
        if keywords == {"allOf"} and isinstance(schema["allOf"], list) and len(schema["allOf"]) == 1:
            schema = schema["allOf"][0]
            continue
        return schema, keywords
    return None, frozenset()


def _looks_at_type_only(node: Mapping[str, Any] | None, keywords: frozenset[str]) -> bool:
    if node is None:
        return False
    if keywords <= {"type"}:
        return True
    if len(keywords) == 1 and keywords <= {"oneOf", "anyOf"}:
        branches = node[next(iter(keywords))]
        return isinstance(branches, list) and all(
            _keywords(b)[0] is not None and _keywords(b)[1] <= {"type"} for b in branches
        )
    return False


@dataclass(frozen=True)
class _Plan:
    """What one schema node lets a shape leave out (see the module's rules)."""

    schema: Any  # held, so that the id() this plan is filed under stays this schema's
    free_scalar: bool = False
    properties: Mapping[str, Any] | None = None  # None: the children are kept exactly
    extra: Mapping[str, Any] | None = None
    map_only: bool = False
    items: Mapping[str, Any] | None = None


_plans: dict[int, _Plan] = {}


def _plan(schema: Any) -> _Plan:
    found = _plans.get(id(schema))
    if found is not None and found.schema is schema:
        return found
    node, keywords = _keywords(schema)
    plan = _Plan(schema)
    if node is not None:
        free = _looks_at_type_only(node, keywords)
        properties: Mapping[str, Any] | None = None
        extra = None
        if keywords <= _OBJECT_KEYWORDS:
            properties = node.get("properties", {})
            extra = node.get("additionalProperties")
            extra = extra if isinstance(extra, Mapping) else None
        items = node.get("items") if keywords <= _ARRAY_KEYWORDS else None
        plan = _Plan(
            schema,
            free,
            properties,
            extra,
            extra is not None and not properties and "required" not in keywords,
            items if isinstance(items, Mapping) else None,
        )
    _plans[id(schema)] = plan
    return plan


_EXACT = _Plan(None)


def _shape(value: Any, schema: Any) -> Any:
    plan = _plan(schema) if schema is not None else _EXACT
    kind = type(value)
    if kind is str:
        return ... if plan.free_scalar else value
    if kind is int:
        return _FREE_INTEGER if plan.free_scalar else value
    if kind is dict:
        if any(type(key) is not str for key in value):
            raise NotPlain
        if plan.free_scalar:  # a schema that looks at the type alone: nothing below is checked
            _plain(value)
            return ("{~",)
        extra = plan.extra
        if plan.map_only:
            return ("{*", tuple(_shape(item, extra) for item in value.values()))
        properties = plan.properties
        if properties is None:
            return ("{", tuple((key, _shape(item, None)) for key, item in value.items()))
        return ("{", tuple((key, _shape(item, properties.get(key, extra))) for key, item in value.items()))
    if kind is list:
        if plan.free_scalar:
            _plain(value)
            return ("[~",)
        each = plan.items
        return ("[", tuple(_shape(item, each) for item in value))
    if kind in _SCALARS:
        return value
    raise NotPlain


def _plain(value: Any) -> None:
    """Raise NotPlain unless ``value`` is plain JSON data (what a shape stands for must be)."""
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                raise NotPlain
            _plain(item)
    elif kind is list:
        for item in value:
            _plain(item)
    elif kind not in _SCALARS:
        raise NotPlain
