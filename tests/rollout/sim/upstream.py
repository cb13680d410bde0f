"""Upstream data the model reads: chart defaults per Operator version and GPU facts per model."""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML


def load_yaml(path: Path) -> Any:
    return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class GpuFacts:
    model: str
    product_label: str
    pci_device_id: str
    mig_capable: bool
    profiles: dict[str, str]  # MIG profile -> its mixed-strategy resource name


@functools.cache
def gpu_facts(upstream: Path) -> tuple[GpuFacts, ...]:
    facts = []
    for entry in load_yaml(upstream / "gpu-facts.yaml")["gpus"]:
        labels = entry.get("gpu_product_labels") or []
        ids = entry.get("pci_device_ids") or []
        if not labels or not ids:
            continue
        profiles = {p["name"]: p["mixed_strategy_resource"] for p in entry.get("mig_profiles") or []}
        facts.append(GpuFacts(entry["model"], labels[0], ids[0], bool(entry.get("mig_capable")), profiles))
    return tuple(facts)


def facts_for_product(upstream: Path, product_labels: tuple[str, ...]) -> GpuFacts:
    for facts in gpu_facts(upstream):
        if facts.product_label in product_labels:
            return facts
    raise LookupError(f"no GPU facts for {product_labels}")


# Releases with no chart files in ../shared/upstream: a neighbour's values.yaml with what differs, read at the tag
# (NVIDIA/gpu-operator@<tag> deployments/gpu-operator/values.yaml): each component's ``version`` and the blocks
# that differ whole. Of the keys the model reads (clusterpolicy_spec), no other differs from the neighbour's.
@dataclass(frozen=True)
class StandIn:
    neighbour: str
    versions: dict[str, str]  # component -> its .version
    blocks: dict[str, Any] = field(default_factory=dict)  # top-level key -> its whole block


STAND_INS: dict[str, StandIn] = {
    "v25.10.1": StandIn(
        "v25.3.3",
        # driver :146, toolkit :224, devicePlugin :235, gfd :339, migManager :349
        {
            "driver": "580.105.08",
            "toolkit": "v1.18.1",
            "devicePlugin": "v0.18.1",
            "gfd": "v0.18.1",
            "migManager": "v0.13.1",
        },
        {"cdi": {"enabled": True}},  # :15-16, no cdi.default
    ),
    "v26.3.3": StandIn(
        "v26.7.0",
        # driver :135, toolkit :214, devicePlugin :226, gfd :343, migManager :354
        {
            "driver": "580.126.20",
            "toolkit": "v1.19.1",
            "devicePlugin": "v0.19.3",
            "gfd": "v0.19.3",
            "migManager": "v0.14.2",
        },
    ),
}


@functools.cache
def chart_values(upstream: Path, version: str) -> dict[str, Any]:
    """The chart's values.yaml at ``version`` (NVIDIA/gpu-operator deployments/gpu-operator/values.yaml)."""
    path = upstream / "gpu-operator" / version / "values.yaml"
    if path.is_file():
        data: dict[str, Any] = load_yaml(path)
        return data
    stand_in = STAND_INS.get(version)
    if stand_in is not None:
        values = copy.deepcopy(chart_values(upstream, stand_in.neighbour))
        for component, component_version in stand_in.versions.items():
            values[component]["version"] = component_version
        values.update(copy.deepcopy(stand_in.blocks))
        return values
    raise LookupError(f"no chart values for {version} in {upstream}")
