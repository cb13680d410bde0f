"""Upstream data the model reads: chart defaults per Operator version and GPU facts per model."""

from __future__ import annotations

import functools
from dataclasses import dataclass
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


@functools.cache
def chart_values(upstream: Path, version: str) -> dict[str, Any]:
    """The chart's values.yaml at ``version`` (NVIDIA/gpu-operator deployments/gpu-operator/values.yaml)."""
    path = upstream / "gpu-operator" / version / "values.yaml"
    if not path.is_file():
        raise LookupError(f"no chart values for {version} in {upstream}")
    data: dict[str, Any] = load_yaml(path)
    return data
