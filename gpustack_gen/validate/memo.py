"""Memo keys for the validators: the same artifacts recur in every cluster of a fleet, so each distinct
document is checked once per process."""

from __future__ import annotations

import json

MEMO_SIZE = 8192
_JSON_SCALARS = frozenset({str, int, bool, float, type(None)})


def _plain_json(value: object) -> bool:
    if type(value) is dict:
        return all(type(k) is str and _plain_json(v) for k, v in value.items())
    if type(value) is list:
        return all(_plain_json(item) for item in value)
    return type(value) in _JSON_SCALARS


def json_key(value: object) -> str | None:
    """A memo key for ``value``: its JSON text with sorted keys, or None when that would not be exact.

    Only plain JSON data has a key: dicts with str keys, lists, str, int, bool, float and None, exactly
    those types (no tuples, subclasses such as ruamel's scalar types, or non-string keys, which JSON
    would turn into something else). ``json.loads`` of the key gives the same data back, up to key
    order, which no check here depends on (findings are sorted).
    """
    return json.dumps(value, sort_keys=True) if _plain_json(value) else None
