"""Find, load and compile the JSON Schemas shipped with gpustack-gen.

The schemas live in the repository's top-level ``schemas/`` folder. A wheel force-includes that folder
as ``gpustack_gen/_data/schemas`` (see ``pyproject.toml``); an editable install or a checkout reads it
from the repository. Each schema is loaded and compiled once per process. ``jsonschema`` is imported
only when a validator is first needed, so importing this module stays cheap.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

__all__ = ["SchemaValidator", "compile_schema", "load_schema", "schema_path", "schema_validator"]

_PACKAGE_DIR = Path(__file__).resolve().parent.parent
_SEARCH_DIRS: tuple[Path, ...] = (
    _PACKAGE_DIR / "_data" / "schemas",  # installed from a wheel
    _PACKAGE_DIR.parent / "schemas",  # editable install or checkout
)


class SchemaValidator(Protocol):
    """The part of a compiled ``jsonschema`` validator that gpustack-gen uses."""

    @property
    def schema(self) -> Mapping[str, Any]: ...

    def iter_errors(self, instance: Any) -> Iterator[Any]: ...

    def is_valid(self, instance: Any) -> bool: ...


def schema_path(name: str) -> Path:
    """Return the path of schema file ``name`` (such as ``"mig-parted-config.schema.json"``).

    Looks in ``gpustack_gen/_data/schemas/`` first, then in the repository's ``schemas/``.
    Raises :class:`FileNotFoundError` naming every place tried.
    """
    if not name or Path(name).name != name or name in {".", ".."}:
        raise ValueError(f"schema name must be a plain file name, got {name!r}")
    tried = []
    for folder in _SEARCH_DIRS:
        candidate = folder / name
        if candidate.is_file():
            return candidate
        tried.append(str(candidate))
    raise FileNotFoundError(f"schema {name!r} not found; looked in: {', '.join(tried)}")


@functools.cache
def load_schema(name: str) -> Mapping[str, Any]:
    """Parse schema file ``name`` once per process. Treat the result as read-only: it is shared."""
    with schema_path(name).open(encoding="utf-8") as handle:
        loaded = json.load(handle)
    if not isinstance(loaded, dict):
        raise ValueError(f"schema {name!r} is not a JSON object")
    return loaded


def compile_schema(schema: Mapping[str, Any], registry: Any = None) -> SchemaValidator:
    """A draft 2020-12 validator for an in-memory ``schema`` (format checking off); callers cache it.

    Its ``pattern`` keyword matches as JSON Schema means it (ECMA-262: ``$`` is the end of the string), where
    jsonschema's own uses Python's ``re.search``, whose ``$`` also matches before a final newline and so takes
    ``"gpu-operator\\n"`` for a valid name.
    """
    validator: SchemaValidator = _validator_class()(
        schema, format_checker=None, **({} if registry is None else {"registry": registry})
    )
    return validator


@functools.cache
def _validator_class() -> Any:
    from jsonschema import Draft202012Validator, ValidationError, validators  # type: ignore[import-untyped]

    def pattern(validator: Any, pattern: str, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
        if validator.is_type(instance, "string") and _ecma_pattern(pattern).search(instance) is None:
            yield ValidationError(f"{instance!r} does not match {pattern!r}")

    return validators.extend(Draft202012Validator, {"pattern": pattern})


@functools.lru_cache(maxsize=1024)
def _ecma_pattern(pattern: str) -> re.Pattern[str]:
    """``pattern`` with each ``$`` outside a character class made ``\\Z``: the end of the string and nothing else."""
    out, in_class, escaped = [], False, False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "$" and not in_class:
            char = r"\Z"
        out.append(char)
    return re.compile("".join(out))


@functools.cache
def schema_validator(name: str) -> SchemaValidator:
    """Return a compiled draft 2020-12 validator for schema ``name`` (format checking off), cached."""
    return compile_schema(load_schema(name))
