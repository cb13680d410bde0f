"""Every named config of the Operator's default mig-parted ConfigMap is accepted as ``sharing.config``
for each GPU model it targets, and renders to the devices upstream's entry creates on that model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from gpustack_gen import load_fleet, render
from gpustack_gen.catalog import GPUS, GpuModel

CONFIGMAPS = (
    "mig-parted/gpu-operator-v26.7.0-default-mig-parted-config-configmap.yaml",
    "mig-parted/gpu-operator-v25.3.4-default-mig-parted-config-configmap.yaml",
)
# Named configs that are not a way to partition a pool, with the reason; everything else must load.
NOT_A_POOL_LAYOUT = {
    "all-disabled": "MIG off: a pool without MIG says strategy: none (its nodes get this label)",
    "all-enabled": "MIG on with no devices: the pool would advertise nothing",
}


def _targets(entry: dict[str, Any], name: str) -> list[GpuModel]:
    """The catalog models an upstream entry applies to: by device filter, else every model with its profiles."""
    filters = entry.get("device-filter")
    if filters is not None:
        wanted = {f.split(":")[0].upper() for f in ([filters] if isinstance(filters, str) else filters)}
        return [g for g in GPUS if g.mig_capable and wanted & {p.upper() for p in g.pci_device_ids}]
    devices = entry.get("mig-devices") or {}
    return [g for g in GPUS if g.mig_capable and devices and all(g.profile(p) for p in devices)]


def _cases(upstream: Path, configmap: str) -> list[tuple[str, str, dict[str, int]]]:
    document = YAML(typ="safe").load((upstream / configmap).read_text(encoding="utf-8"))
    config = YAML(typ="safe").load(document["data"]["config.yaml"])
    cases = []
    for name, entries in config["mig-configs"].items():
        if name in NOT_A_POOL_LAYOUT:
            continue
        for entry in entries:
            for gpu in _targets(entry, name):
                cases.append((name, gpu.id, dict(entry["mig-devices"])))
    return cases


def _fleet(gpu: str, config: str) -> dict[str, Any]:
    return {
        "apiVersion": "gpustack-gen/v1alpha1",
        "kind": "Fleet",
        "clusters": [
            {
                "name": "c",
                "kubernetes": "1.31.4",
                "mig": {"strategy": "mixed"},
                "nodePools": [
                    {
                        "name": "p",
                        "gpu": gpu,
                        "nodes": 1,
                        "nodeSelector": {"pool": "p"},
                        "sharing": {"strategy": "mig", "config": config},
                    }
                ],
            }
        ],
    }


@pytest.mark.parametrize("configmap", CONFIGMAPS, ids=lambda p: p.split("/")[-1].split("-default")[0])
def test_every_default_config_loads_for_the_models_it_targets(upstream: Path, configmap: str) -> None:
    cases = _cases(upstream, configmap)
    assert len(cases) > 80  # a few per MIG model and profile
    problems = []
    for name, gpu, devices in cases:
        try:
            bundle = render(load_fleet(_fleet(gpu, name)))
        except Exception as error:  # every failure is collected, then reported together
            problems.append(f"{name} on {gpu}: {error}")
            continue
        (configmap_doc,) = bundle["c/mig-parted-config.yaml"].documents
        (ours,) = configmap_doc["data"]["config.yaml"].data["mig-configs"][name]
        if ours["mig-devices"] != devices and configmap.endswith("v26.7.0-default-mig-parted-config-configmap.yaml"):
            problems.append(f"{name} on {gpu}: we create {ours['mig-devices']}, upstream {devices}")
    assert problems == [], "\n".join(problems)


def test_the_exceptions_are_refused_with_a_reason() -> None:
    for name in NOT_A_POOL_LAYOUT:
        with pytest.raises(Exception, match="creates no MIG devices"):
            load_fleet(_fleet("a100-40gb", name))
