"""Small fleets for the diff and change tests: one base fleet and a way to change one thing in it."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from gpustack_gen import Fleet, load_fleet
from gpustack_gen.diff import DiffResult, diff_fleets

BASE: dict[str, Any] = {
    "apiVersion": "gpustack-gen/v1alpha1",
    "kind": "Fleet",
    "defaults": {
        "operator": {
            "version": "v25.3.3",
            "namespace": "gpu-operator",
            "cdi": {"enabled": True, "default": True},
            "driver": {"enabled": True},
            "toolkit": {"enabled": True},
        }
    },
    "clusters": [
        {
            "name": "prod",
            "kubernetes": "1.29.15",
            "containerRuntime": "containerd",
            "mig": {"strategy": "mixed"},
            "nodePools": [
                {
                    "name": "t4",
                    "gpu": "tesla-t4",
                    "nodes": 3,
                    "nodeSelector": {"pool": "t4"},
                    "sharing": {"strategy": "time-slicing", "replicas": 4},
                },
                {
                    "name": "a100",
                    "gpu": "a100-40gb",
                    "nodes": 2,
                    "gpusPerNode": 8,
                    "nodeSelector": {"pool": "a100"},
                    "sharing": {"strategy": "mig", "layout": {"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 2}},
                },
            ],
            "workloads": [
                {"name": "api", "namespace": "ml", "pool": "t4", "replicas": 6},
                {"name": "notebook", "namespace": "research", "pool": "a100", "migProfile": "1g.5gb", "replicas": 4},
            ],
        }
    ],
}


def base() -> dict[str, Any]:
    return copy.deepcopy(BASE)


def fleet(data: dict[str, Any], name: str = "fleet.yaml") -> Fleet:
    return load_fleet(data, name=name)


def changed(change: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    data = base()
    change(data)
    return data


def diff(old: dict[str, Any], new: dict[str, Any]) -> DiffResult:
    return diff_fleets(fleet(old, "old.yaml"), fleet(new, "new.yaml"))


def prod(data: dict[str, Any]) -> dict[str, Any]:
    cluster: dict[str, Any] = data["clusters"][0]
    return cluster


def pool(data: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(p for p in prod(data)["nodePools"] if p["name"] == name)
    return found
