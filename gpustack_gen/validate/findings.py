"""Schema findings: ``jsonschema`` errors turned into short messages a person can act on.

A :class:`SchemaFinding` names the field by a dotted path (``sharing.timeSlicing.resources[0].replicas``),
says what is wrong and, when it can, how to fix it. :func:`findings_from_errors` does the translation
without importing ``jsonschema``: it only reads the attributes every ``ValidationError`` has.

Schema annotations the translation understands (all optional, on the failing subschema):

- ``x-expected``: how to describe what the value should be, used for ``oneOf``/``anyOf`` and list errors;
- ``x-pattern-description``: how to describe a ``pattern`` in words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpustack_gen.errors import value_kind
from gpustack_gen.suggest import closest
from gpustack_gen.validate.schema_files import SchemaValidator

__all__ = [
    "SchemaFinding",
    "describe_value",
    "findings_from_errors",
    "format_path",
    "generic_path",
    "schema_findings",
]


@dataclass(frozen=True, order=True)
class SchemaFinding:
    """One problem in a config document, located by field path; sorts by path."""

    path: str  # e.g. "sharing.timeSlicing.resources[0].replicas"; "" for the whole document
    message: str
    hint: str = ""


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")

_TYPE_NOUNS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean (true or false)",
    "object": "a mapping",
    "array": "a list",
    "null": "null",
}

_NO_MISPLACEMENTS: Mapping[str, str] = {}


def _format_parts(parts: Iterable[object], *, generic: bool) -> str:
    out = ""
    for part in parts:
        if isinstance(part, int) and not isinstance(part, bool):
            out += "[]" if generic else f"[{part}]"
        elif isinstance(part, str) and _PLAIN_KEY.match(part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(str(part))}]"
    return out


def format_path(parts: Iterable[object]) -> str:
    """``["sharing", "mps", "resources", 0, "name"]`` -> ``"sharing.mps.resources[0].name"``.

    Keys that are not plain identifiers (dots, '+', spaces...) are written as ``["1g.10gb"]``.
    """
    return _format_parts(parts, generic=False)


def generic_path(parts: Iterable[object]) -> str:
    """Like :func:`format_path` with every list index written ``[]``: the key for misplacement tables."""
    return _format_parts(parts, generic=True)


def describe_value(value: object, *, with_kind: bool = False) -> str:
    """Show a YAML value the way a user wrote it: ``'4'``, ``4``, ``true``, ``null``, ``a mapping``.

    With ``with_kind``, scalars gain their type: ``'4' (a string)``, ``548540638 (an integer)``.
    """
    if isinstance(value, bool):
        shown = "true" if value else "false"
    elif value is None:
        return "null"
    elif isinstance(value, str | int | float):
        shown = repr(value)
    elif isinstance(value, Mapping):
        return "an empty mapping" if not value else "a mapping"
    elif isinstance(value, Sequence):
        if not value:
            return "an empty list"
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    else:
        return value_kind(value)
    return f"{shown} ({value_kind(value)})" if with_kind else shown


def _expected(schema: Mapping[str, Any]) -> str:
    """Describe in words what ``schema`` accepts."""
    if isinstance(schema.get("x-expected"), str):
        return str(schema["x-expected"])
    if "const" in schema:
        return describe_value(schema["const"])
    if isinstance(schema.get("enum"), list):
        return "one of " + ", ".join(describe_value(v) for v in schema["enum"])
    if isinstance(schema.get("x-pattern-description"), str):
        return str(schema["x-pattern-description"])
    kind = schema.get("type")
    if isinstance(kind, list):
        noun = " or ".join(_TYPE_NOUNS.get(str(k), str(k)) for k in kind)
    elif isinstance(kind, str):
        noun = _TYPE_NOUNS.get(kind, kind)
    else:
        noun = "a value"
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        return f"{noun} between {low} and {high}"
    if low is not None:
        return f"{noun} >= {low}"
    if high is not None:
        return f"{noun} <= {high}"
    if "exclusiveMinimum" in schema:
        return f"{noun} > {schema['exclusiveMinimum']}"
    if "pattern" in schema:
        return f"{noun} matching {schema['pattern']}"
    return noun


def _value_hint(value: object, choices: Iterable[object]) -> str:
    if not isinstance(value, str):
        return ""
    strings = [c for c in choices if isinstance(c, str)]
    for choice in strings:
        if choice.lower() == value.lower():
            return f"values are case-sensitive: use {choice!r}"
    match = closest(value, strings)
    return f"did you mean {match!r}?" if match else ""


def _looks_numeric(value: str) -> bool:
    try:
        float(value.strip())
    except ValueError:
        return False
    return bool(value.strip())


def _type_hint(expected_types: object, value: object) -> str:
    kinds = set(expected_types) if isinstance(expected_types, list) else {expected_types}
    if kinds & {"integer", "number"} and isinstance(value, str) and _looks_numeric(value):
        return f"remove the quotes: {value!r} is a string, write {value.strip()} instead"
    if "string" in kinds and isinstance(value, bool | int | float):
        return "quote the value: YAML read it as " + value_kind(value)
    return ""


def _first_sentence(text: object) -> str:
    if not isinstance(text, str):
        return ""
    head, _, _ = text.partition(". ")
    return head.rstrip(".")


def _unknown_keys(error: Any, misplaced: Mapping[str, str], unknown_key_hint: str) -> list[SchemaFinding]:
    instance, schema = error.instance, error.schema
    if not isinstance(instance, Mapping):
        return []
    allowed = list(schema.get("properties", {}))
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    lowered_table = {k.lower(): v for k, v in misplaced.items()}
    parent = list(error.absolute_path)
    out = []
    for key in instance:
        if key in allowed or (isinstance(key, str) and any(p.search(key) for p in patterns)):
            continue
        parts = [*parent, key]
        target = lowered_table.get(generic_path(parts).lower())
        hint = unknown_key_hint
        if target is not None:
            suggestion: str | None = target
            hint = f"move it to {target}; " + unknown_key_hint if unknown_key_hint else f"move it to {target}"
        else:
            sibling = closest(str(key), allowed)
            suggestion = format_path([*parent, sibling]) if sibling is not None else None
            if sibling is not None and sibling.lower() == str(key).lower():
                hint = f"keys are case-sensitive here: write {sibling!r}"
        message = f"unknown key {str(key)!r}"
        if suggestion:
            message += f" (did you mean {suggestion}?)"
        out.append(SchemaFinding(format_path(parts), message, hint.strip()))
    return out


def _is_same_place_mismatch(error: Any) -> bool:
    """True when a ``oneOf`` branch failed on the value itself (wrong type/const/enum), not deeper down."""
    return not list(error.relative_path) and error.validator in {"type", "const", "enum"}


def _collect_enum_values(errors: Iterable[Any]) -> list[object]:
    values: list[object] = []
    for sub in errors:
        if sub.validator == "enum" and isinstance(sub.validator_value, list):
            values.extend(sub.validator_value)
        elif sub.validator == "const":
            values.append(sub.validator_value)
    return values


def _one_of(error: Any, misplaced: Mapping[str, str], unknown_key_hint: str) -> list[SchemaFinding]:
    """Explain a failed ``oneOf``/``anyOf``: follow the one branch that fits the value's shape, if any."""
    path = format_path(error.absolute_path)
    context = list(error.context or ())
    branches: dict[object, list[Any]] = {}
    for sub in context:
        key = sub.relative_schema_path[0] if sub.relative_schema_path else None
        branches.setdefault(key, []).append(sub)
    viable = [errs for errs in branches.values() if not any(_is_same_place_mismatch(e) for e in errs)]
    if len(viable) == 1 and all(list(e.relative_path) for e in viable[0]):
        return _translate(viable[0], misplaced, unknown_key_hint)
    expected = _expected(error.schema) if "x-expected" in error.schema else "one of the allowed forms"
    message = f"expected {expected}, got {describe_value(error.instance, with_kind=True)}"
    hint = _value_hint(error.instance, _collect_enum_values(context))
    if not hint:
        kinds: list[object] = []
        for sub in context:
            if sub.validator == "type" and not list(sub.relative_path):
                # A branch may name one type or a list of them ({"type": ["string", "integer"]}).
                value = sub.validator_value
                kinds.extend(value if isinstance(value, list) else [value])
        hint = _type_hint(kinds, error.instance)
    return [SchemaFinding(path, message, hint)]


def _one(error: Any, misplaced: Mapping[str, str], unknown_key_hint: str) -> list[SchemaFinding]:
    keyword: str = error.validator
    schema: Mapping[str, Any] = error.schema if isinstance(error.schema, Mapping) else {}
    value = error.instance
    parts = list(error.absolute_path)
    in_property_names = "propertyNames" in list(error.relative_schema_path)
    if in_property_names:
        parts.append(value)
    path = format_path(parts)
    got = describe_value(value, with_kind=keyword == "type")

    if keyword == "additionalProperties" and schema.get("additionalProperties") is False:
        return _unknown_keys(error, misplaced, unknown_key_hint)
    if keyword in {"oneOf", "anyOf"}:
        return _one_of(error, misplaced, unknown_key_hint)
    if keyword == "required":
        props = schema.get("properties", {})
        return [
            SchemaFinding(
                format_path([*parts, key]),
                f"missing required key {key!r}",
                _first_sentence(props.get(key, {}).get("description")),
            )
            for key in error.validator_value
            if isinstance(value, Mapping) and key not in value
        ]
    if in_property_names:
        return [SchemaFinding(path, f"invalid key {describe_value(value)}: expected {_expected(schema)}")]

    hint = ""
    if keyword == "type":
        message = f"expected {_expected(schema)}, got {got}"
        hint = _type_hint(schema.get("type"), value)
    elif keyword in {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "const", "pattern"}:
        message = f"expected {_expected(schema)}, got {got}"
        lowered = value.lower() if isinstance(value, str) else None
        fixable = keyword == "pattern" and lowered and lowered != value
        if fixable and lowered and re.search(str(schema["pattern"]), lowered):
            hint = f"use lowercase: {lowered!r}"
    elif keyword == "enum":
        message = f"expected {_expected(schema)}, got {got}"
        hint = _value_hint(value, error.validator_value)
    elif keyword in {"minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties"}:
        if "x-expected" in schema:
            message = f"expected {schema['x-expected']}, got {got}"
        elif keyword == "minItems":
            message = f"expected at least {error.validator_value} item(s), got {got}"
        elif keyword == "maxItems":
            message = f"expected at most {error.validator_value} item(s), got {got}"
        elif keyword == "uniqueItems":
            message = "contains duplicate entries"
        elif keyword == "minProperties":
            message = f"expected at least {error.validator_value} entry, got {got}"
        else:
            message = f"expected at most {error.validator_value} entries, got {got}"
    elif keyword == "minLength":
        message = (
            "expected a non-empty string"
            if error.validator_value == 1
            else f"expected at least {error.validator_value} characters, got {got}"
        )
    elif keyword == "maxLength":
        length = len(value) if isinstance(value, str) else "?"
        message = f"expected at most {error.validator_value} characters, got {length}"
    else:
        message = str(error.message)
    return [SchemaFinding(path, message, hint)]


def _translate(errors: Iterable[Any], misplaced: Mapping[str, str], unknown_key_hint: str) -> list[SchemaFinding]:
    out: list[SchemaFinding] = []
    for error in errors:
        out.extend(_one(error, misplaced, unknown_key_hint))
    return out


def findings_from_errors(
    errors: Iterable[Any],
    *,
    misplaced: Mapping[str, str] = _NO_MISPLACEMENTS,
    unknown_key_hint: str = "",
) -> list[SchemaFinding]:
    """Translate ``jsonschema`` validation errors into sorted, de-duplicated findings.

    ``misplaced`` maps the generic path of a key that is often put in the wrong place
    (``"flags.renameByDefault"``, list indices written ``[]``, compared case-insensitively) to where it
    belongs (``"sharing.timeSlicing.renameByDefault"``); it is consulted before the did-you-mean search
    over the keys allowed at that level. ``unknown_key_hint`` is added to every unknown-key finding.
    """
    return sorted(set(_translate(errors, misplaced, unknown_key_hint)))


def schema_findings(
    validator: SchemaValidator,
    instance: object,
    *,
    misplaced: Mapping[str, str] = _NO_MISPLACEMENTS,
    unknown_key_hint: str = "",
) -> list[SchemaFinding]:
    """Validate ``instance`` with ``validator`` and return the sorted findings ([] when valid)."""
    return findings_from_errors(validator.iter_errors(instance), misplaced=misplaced, unknown_key_hint=unknown_key_hint)
