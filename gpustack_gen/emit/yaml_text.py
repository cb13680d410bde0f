"""Deterministic YAML serialization of plain data (and of YAML embedded in ConfigMap strings)."""

from __future__ import annotations

import io
from functools import cache
from typing import Any

from ..compile.artifact import EmbeddedYaml


@cache
def _dumper() -> Any:
    from ruamel.yaml import YAML
    from ruamel.yaml.nodes import ScalarNode
    from ruamel.yaml.representer import RoundTripRepresenter
    from ruamel.yaml.resolver import VersionedResolver

    resolver = VersionedResolver()
    str_tag = "tag:yaml.org,2002:str"

    class Representer(RoundTripRepresenter):
        pass

    def represent_str(representer: Any, data: str) -> Any:
        if "\n" in data:
            return representer.represent_scalar(str_tag, data, style="|")
        # Strings that would read back as another type ("1", "true", "1.29") are double-quoted,
        # as Kubernetes documentation writes them.
        if resolver.resolve(ScalarNode, data, (True, False)) != str_tag:
            return representer.represent_scalar(str_tag, data, style='"')
        return representer.represent_scalar(str_tag, data)

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
