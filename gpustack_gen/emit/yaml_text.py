"""Deterministic YAML serialization of plain data (and of YAML embedded in ConfigMap strings)."""

from __future__ import annotations

import io
from functools import cache
from typing import Any

from ..compile.artifact import EmbeddedYaml

_STR_TAG = "tag:yaml.org,2002:str"
# Characters YAML 1.1 readers treat as line breaks (or a byte-order mark), which a literal block or a
# plain/single-quoted scalar cannot carry reliably: only double quotes with escapes round-trip them.
_ODD_CHARACTERS = frozenset("\r\x85\u2028\u2029\ufeff")


def needs_escapes(text: str) -> bool:
    """Whether ``text`` holds a character that only a double-quoted scalar writes back faithfully."""
    return any(c in _ODD_CHARACTERS or (c != "\n" and not c.isprintable()) for c in text)


@cache
def _resolvers() -> tuple[Any, ...]:
    from ruamel.yaml.resolver import VersionedResolver

    # Kubernetes tools read YAML 1.1 (sigs.k8s.io/yaml, Helm: `on`, `yes`, `1:30` are not strings
    # there) and others read YAML 1.2 (`0o17`): a string is plain only when both read it as a string.
    return VersionedResolver(version=(1, 1)), VersionedResolver(version=(1, 2))


def reads_as_string(text: str) -> bool:
    """Whether ``text`` written as a plain scalar reads back as a string under YAML 1.1 and 1.2."""
    from ruamel.yaml.nodes import ScalarNode

    return all(r.resolve(ScalarNode, text, (True, False)) == _STR_TAG for r in _resolvers())


@cache
def _dumper() -> Any:
    from ruamel.yaml import YAML
    from ruamel.yaml.representer import RoundTripRepresenter

    class Representer(RoundTripRepresenter):
        pass

    def represent_str(representer: Any, data: str) -> Any:
        if needs_escapes(data):
            return representer.represent_scalar(_STR_TAG, data, style='"')
        if "\n" in data:
            return representer.represent_scalar(_STR_TAG, data, style="|")
        # Strings that would read back as another type ("1", "true", "1.29", "on") are double-quoted,
        # as Kubernetes documentation writes them.
        if not reads_as_string(data):
            return representer.represent_scalar(_STR_TAG, data, style='"')
        return representer.represent_scalar(_STR_TAG, data)

    Representer.add_representer(str, represent_str)
    yaml = YAML(typ="rt")
    yaml.Representer = Representer
    yaml.default_flow_style = False
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=2, offset=0)
    return yaml


def dump_yaml(data: Any) -> str:
    stream = io.StringIO()
    _dumper().dump(_embed(data), stream)
    return stream.getvalue()


def _embed(data: Any) -> Any:
    """Serialize embedded YAML files first: the dumper is not reentrant."""
    if isinstance(data, EmbeddedYaml):
        return dump_yaml(data.data)
    if isinstance(data, dict):
        return {key: _embed(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [_embed(item) for item in data]
    return data
