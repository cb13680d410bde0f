"""Inputs of ``gpustack-gen import`` written for the purpose (tests/importer/data) and helpers to vary them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from gpustack_gen.importer import InputText

DATA = Path(__file__).parent / "data"


@pytest.fixture
def data() -> Path:
    return DATA


def load_yaml(path: Path) -> Any:
    return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))


@pytest.fixture
def nodes_with() -> Callable[..., InputText]:
    """nodes.yaml with the labels of the nodes of one EKS node group changed (None removes a label)."""

    def make(changes: dict[str, dict[str, str | None]], source: str = "nodes.yaml") -> InputText:
        document = load_yaml(DATA / source)
        for item in document["items"]:
            labels = item["metadata"]["labels"]
            group = labels.get("eks.amazonaws.com/nodegroup") or labels.get("node.kubernetes.io/instance-type")
            for key, value in changes.get(group, {}).items():
                if value is None:
                    labels.pop(key, None)
                else:
                    labels[key] = value
        return InputText(source, json.dumps(document))

    return make
