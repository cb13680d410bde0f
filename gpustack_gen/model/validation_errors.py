"""Turn pydantic's validation errors into located problems with plain-language messages and hints."""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import Problem
from ..suggest import suggest
from ..yamlio.source import PathKey, SourceDocument

_YAML11_BOOLEANS = {"yes", "no", "on", "off", "y", "n", "true", "false"}
_SEXAGESIMAL = re.compile(r"^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$")
_MISSING_EXAMPLES = {
    "apiVersion": "gpustack-gen/v1alpha1",
    "kind": "Fleet",
    "clusters": "[...] (a list of clusters)",
    "name": "<a lowercase name>",
    "nodePools": "[...] (a list of node pools)",
    "gpu": "tesla-t4 (see `gpustack-gen gpus`)",
    "nodes": "<number of nodes>",
    "nodeSelector": "{pool: <name>}",
    "namespace": "<a lowercase namespace>",
    "pool": "<the name of a node pool>",
    "key": "<taint key>",
}


def problems_from_validation_error(
    error: ValidationError, doc: SourceDocument, root: type[BaseModel], range_hints: Mapping[str, str]
) -> list[Problem]:
    """``range_hints``: fleet key -> what its bounds mean, for range errors (the backends' own keys)."""
    problems: list[Problem] = []
    seen: set[tuple[PathKey, str]] = set()
    for item in error.errors(include_url=False):
        path = tuple(item["loc"])
        kind = item["type"]
        # A union of int|str reports one error per branch; keep the first of each place.
        loc_key = (_strip_union_tags(path), "union" if "[" in str(path) else kind)
        if loc_key in seen:
            continue
        seen.add(loc_key)
        problems.append(_problem(item, _strip_union_tags(path), doc, root, range_hints))
    return problems


def _strip_union_tags(path: tuple[Any, ...]) -> PathKey:
    # pydantic adds branch names such as 'int' or 'str' or 'function-after[...]' inside unions.
    return tuple(p for p in path if not (isinstance(p, str) and (p in ("int", "str") or "[" in p)))


def _problem(
    item: Any, path: PathKey, doc: SourceDocument, root: type[BaseModel], range_hints: Mapping[str, str]
) -> Problem:
    kind: str = item["type"]
    value = item.get("input")
    message: str = item["msg"]
    hint = ""
    key = False
    if kind == "extra_forbidden":
        key = True
        name = str(path[-1])
        allowed = _allowed_keys(root, path[:-1])
        message = f"unknown key {name!r}"
        close = suggest(name, allowed)
        if close:
            hint = f"did you mean {close[0]!r}?"
        elif allowed:
            hint = "allowed keys here: " + ", ".join(allowed)
    elif kind == "missing":
        message = f"required key {path[-1]!r} is missing"
        hint = f"add {path[-1]}: {_MISSING_EXAMPLES.get(str(path[-1]), '...')}"
        line, column = doc.locate(path[:-1])
        return Problem(doc.name, line, column, _fmt(path), message, hint)
    elif kind in ("dns_label", "label", "quantity", "value"):
        ctx = item.get("ctx") or {}
        message = str(ctx.get("problem", message))
        hint = str(ctx.get("hint", ""))
        if "key" in ctx:
            path = (*path, str(ctx["key"]))
            key = True
    elif kind in ("string_type", "str_type"):
        message = f"expected a string, got {_describe(value)}"
        if isinstance(value, bool):
            hint = f'quote it if a string was meant: "{str(value).lower()}"'
        elif isinstance(value, float) and path and path[-1] == "kubernetes":
            hint = f'quote it, as major.minor.patch: "{value}.0" or the patch release you run'
        elif isinstance(value, (int, float)):
            hint = f'quote it: "{value}"'
        elif isinstance(value, (datetime.date, datetime.datetime)):
            hint = f'YAML reads this as a date; quote it: "{value}"'
    elif kind in ("int_type", "int_parsing", "int_from_float"):
        message = f"expected an integer, got {_describe(value)}"
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            hint = f"remove the quotes: {value.strip()}"
        elif isinstance(value, str) and _SEXAGESIMAL.fullmatch(value):
            hint = f"YAML 1.1 would read {value} as a base-60 number; write the integer in decimal"
        elif isinstance(value, float):
            hint = "write a whole number in decimal, without a fraction or an exponent"
        else:
            hint = "write a whole number such as 4"
    elif kind == "bool_type":
        message = f"expected true or false, got {_describe(value)}"
        if isinstance(value, str) and value.lower() in _YAML11_BOOLEANS:
            hint = f"YAML 1.2 reads {value!r} as a string; write true or false"
        else:
            hint = "write true or false"
    elif kind in ("literal_error", "enum"):
        expected = item.get("ctx", {}).get("expected", "")
        message = f"expected one of {expected}, got {_describe(value)}"
        options = [o.strip().strip("'") for o in str(expected).replace(" or ", ",").split(",") if o.strip()]
        if isinstance(value, str):
            close = suggest(value, options)
            if close:
                hint = f"did you mean {close[0]!r}?"
            elif path and path[-1] == "containerRuntime":
                hint = "Kubernetes has run without Docker (dockershim) since 1.24: containerd or cri-o"
    elif kind in ("dict_type", "model_type", "model_attributes_type"):
        message = f"expected a mapping, got {_describe(value)}"
        allowed = _allowed_keys(root, path)
        if allowed == ["strategy"] and isinstance(value, str):
            hint = f"write {{strategy: {value}}}"
        elif allowed:
            hint = "keys here: " + ", ".join(allowed)
    elif kind == "list_type":
        message = f"expected a list, got {_describe(value)}"
        if isinstance(value, dict):
            hint = "start each item with '- '"
    elif kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        bound = next(iter(item.get("ctx", {}).values()), "")
        relation = {
            "greater_than_equal": "at least",
            "less_than_equal": "at most",
            "greater_than": "more than",
            "less_than": "less than",
        }[kind]
        message = f"must be {relation} {bound}, got {value!r}"
        if path and path[-1] == "replicas" and "sharing" in path:
            hint = "replicas is how many pods share one GPU (at least 2); for whole GPUs use strategy: none"
        elif path and path[-1] == "replicas":
            hint = "replicas is the number of pods of the workload"
        elif path and path[-1] == "gpus":
            hint = "gpus is what one pod asks for: 1 unless it needs several"
        elif path and path[-1] == "gpusPerNode":
            hint = "the number of physical GPUs in one node, 1 to 8 on most machines"
        elif path and path[-1] == "nodes":
            hint = "the number of nodes in the pool"
        elif len(path) >= 2 and path[-2] == "layout":
            hint = "instances of this profile per GPU; remove the profile instead of writing 0"
        elif path and path[-1] in range_hints:
            hint = range_hints[str(path[-1])]
    elif kind in ("too_short", "string_too_short"):
        message = "must not be empty"
        if isinstance(value, list):
            hint = "add at least one item"
        elif isinstance(value, dict):
            hint = "add at least one entry"
    elif kind == "string_pattern_mismatch":
        message = f"{_describe(value)} does not match the required pattern {item.get('ctx', {}).get('pattern')}"
    line, column = doc.locate(path, key=key)
    return Problem(doc.name, line, column, _fmt(path), message, hint)


def _fmt(path: PathKey) -> str:
    from ..yamlio.source import format_path

    return format_path(path)


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, datetime.datetime | datetime.date):
        return f"the date {value.isoformat()}"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _allowed_keys(root: type[BaseModel], path: PathKey) -> list[str]:
    """The aliases accepted at ``path`` (a mapping inside the model tree), for did-you-mean hints."""
    model: Any = root
    for part in path:
        if isinstance(part, int):
            continue
        if isinstance(model, _DictOf):
            model = model.value
            continue
        model = _field_model(model, part)
        if model is None:
            return []
    if isinstance(model, type) and issubclass(model, BaseModel):
        return [f.alias or n for n, f in model.model_fields.items()]
    return []


def _field_model(model: Any, alias: str) -> Any:
    import typing

    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return None
    for name, field in model.model_fields.items():
        if (field.alias or name) == alias:
            return _unwrap(field.annotation, typing)
    return None


def _unwrap(annotation: Any, typing: Any) -> Any:
    origin = typing.get_origin(annotation)
    if origin is None:
        return annotation
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin is dict:
        return _DictOf(_unwrap(args[1], typing)) if len(args) == 2 else None
    for arg in args:
        unwrapped = _unwrap(arg, typing)
        if isinstance(unwrapped, (type, _DictOf)):
            return unwrapped
    return None


class _DictOf:
    def __init__(self, value: Any) -> None:
        self.value = value
