"""Loads of YAML as Kubernetes tools and people write it: ``lint``, ``import`` and ``diff`` read their inputs here.

The fleet file has a reader of its own (``source.py``), which refuses what a fleet file must not hold;
these take any YAML 1.2 stream:

- :func:`load_located_all` and :func:`load_located`: ruamel's round-trip nodes, whose mappings and sequences
  know the line and column of each key and item (``.lc``), for messages that point into the input;
- :func:`load_plain`: one document as plain Python data (:func:`to_plain`);
- :func:`load_data`: one document through ruamel's safe loader (faster, no positions), for files
  gpustack-gen wrote itself.

ruamel's exceptions (``ruamel.yaml.error.YAMLError`` and its subclasses) pass through: each reader words its
own problems. ruamel is imported on first use, so that importing a command does not load it.

Every load has a budget: ruamel returns the anchored node itself for each alias, so parsing an alias bomb is cheap
but every walk of the result (to plain data, JSON, validation) visits each reference, nine times more per level
(``ruamel/yaml/composer.py:110-118``), and deep nesting exhausts the stack of ruamel's recursive parser and of every
walk. Each loaded document is walked once here, counting each visit, and refused with a ``YAMLError`` past
:data:`~.limits.MAX_INPUT_VALUES` values or :data:`~.limits.MAX_DEPTH` levels.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from typing import Any

from .limits import MAX_DEPTH, MAX_INPUT_VALUES, value_error_reason

__all__ = ["load_data", "load_located", "load_located_all", "load_plain", "to_plain"]


def load_located_all(text: str, *, allow_duplicate_keys: bool = False) -> list[Any]:
    """Every document of ``text`` as round-trip nodes (an empty document is None).

    ``allow_duplicate_keys``: the last of a repeated key wins, as in Kubernetes, instead of an error.
    """
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = allow_duplicate_keys
    with _parse_errors_as_yaml_errors():
        documents: list[Any] = _within_budget(text, list(yaml.load_all(text)))
    return documents


def load_located(text: str) -> Any:
    """The one document of ``text`` as round-trip nodes."""
    from ruamel.yaml import YAML

    with _parse_errors_as_yaml_errors():
        return _within_budget(text, YAML(typ="rt").load(text))


def load_plain(text: str) -> Any:
    """The one document of ``text`` as plain data: see :func:`to_plain`."""
    return to_plain(load_located(text))


def to_plain(node: Any) -> Any:
    """ruamel round-trip data to plain dicts, lists, str, int, float, bool and None."""
    if isinstance(node, Mapping):
        return {str(key): to_plain(value) for key, value in node.items()}
    if isinstance(node, list | tuple):
        return [to_plain(item) for item in node]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, str):
        return str(node)
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    return str(node)  # timestamps and other scalars: their text


def load_data(text: str) -> Any:
    """The one document of ``text`` through ruamel's safe loader: dicts, lists and scalars, no positions."""
    with _parse_errors_as_yaml_errors():
        return _within_budget(text, _safe_loader().load(text))


@cache
def _safe_loader() -> Any:
    from ruamel.yaml import YAML

    # ruamel's own parser whether or not ruamel.yaml.clib is installed: libyaml reads a few inputs differently
    # (it takes tabs where ruamel does not, for one), and a diff must not depend on the machine.
    return YAML(typ="safe", pure=True)


def _within_budget(text: str, loaded: Any) -> Any:
    """``loaded``, once a walk of it as its aliases expand stays within the budget; raises ``YAMLError`` otherwise."""
    from ruamel.yaml.error import YAMLError

    visits = 0
    stack: list[tuple[Any, int]] = [(loaded, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise YAMLError(f"nesting deeper than {MAX_DEPTH} levels")
        if isinstance(node, Mapping):
            children: Any = [*node.keys(), *node.values()]
        elif isinstance(node, list | tuple):
            children = node
        else:
            continue
        visits += len(children)
        if visits > MAX_INPUT_VALUES:
            raise YAMLError(
                f"more than {MAX_INPUT_VALUES:,} values once its aliases are expanded (an alias bomb?); "
                "kubectl and helm never write aliases"
            )
        stack.extend((child, depth + 1) for child in children)
    return loaded


@contextmanager
def _parse_errors_as_yaml_errors() -> Iterator[None]:
    """A constructor's ValueError (an integer of more than 4300 digits), or the parser running out of stack on deep
    nesting, raised as the YAMLError callers catch."""
    from ruamel.yaml.error import YAMLError

    try:
        yield
    except ValueError as exc:
        raise YAMLError(value_error_reason(exc)) from None
    except RecursionError:
        raise YAMLError(f"nesting deeper than {MAX_DEPTH} levels") from None
