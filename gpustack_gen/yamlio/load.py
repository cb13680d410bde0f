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
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

__all__ = ["load_data", "load_located", "load_located_all", "load_plain", "to_plain"]


def load_located_all(text: str, *, allow_duplicate_keys: bool = False) -> list[Any]:
    """Every document of ``text`` as round-trip nodes (an empty document is None).

    ``allow_duplicate_keys``: the last of a repeated key wins, as in Kubernetes, instead of an error.
    """
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = allow_duplicate_keys
    return list(yaml.load_all(text))


def load_located(text: str) -> Any:
    """The one document of ``text`` as round-trip nodes."""
    from ruamel.yaml import YAML

    return YAML(typ="rt").load(text)


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
    return _safe_loader().load(text)


@cache
def _safe_loader() -> Any:
    from ruamel.yaml import YAML

    # ruamel's own parser whether or not ruamel.yaml.clib is installed: libyaml reads a few inputs differently
    # (it takes tabs where ruamel does not, for one), and a diff must not depend on the machine.
    return YAML(typ="safe", pure=True)
