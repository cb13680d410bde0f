"""Find, load and compile the JSON Schemas shipped with gpustack-gen.

The schemas live in the repository's top-level ``schemas/`` folder. A wheel force-includes that folder
as ``gpustack_gen/_data/schemas`` (see ``pyproject.toml``); an editable install or a checkout reads it
from the repository. Each schema is loaded and compiled once per process. ``jsonschema`` is imported
only when a validator is first needed, so importing this module stays cheap.
"""

from __future__ import annotations

import functools
import json
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


def compile_schema(schema: Mapping[str, Any]) -> SchemaValidator:
    """A draft 2020-12 validator for an in-memory ``schema`` (format checking off); callers cache it."""
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # lazy: cold start

    validator: SchemaValidator = Draft202012Validator(schema, format_checker=None)
    return validator


@functools.cache
def schema_validator(name: str) -> SchemaValidator:
    """Return a compiled draft 2020-12 validator for schema ``name`` (format checking off), cached."""
    return compile_schema(load_schema(name))
