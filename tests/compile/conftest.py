"""Small fleets for compiler tests, built from one valid base so that each test changes one thing."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from gpustack_gen import load_fleet
from gpustack_gen.model import Cluster

BASE: dict[str, Any] = {
    "apiVersion": "gpustack-gen/v1alpha1",
    "kind": "Fleet",
    "clusters": [
        {
            "name": "c1",
            "kubernetes": "1.30.2",
            "operator": {"version": "v25.3.3"},
            "nodePools": [
                {"name": "p1", "gpu": "tesla-t4", "nodes": 2, "gpusPerNode": 1, "nodeSelector": {"pool": "p1"}}
            ],
            "workloads": [{"name": "w1", "namespace": "ml", "pool": "p1"}],
        }
    ],
}


@pytest.fixture
def make_cluster() -> Callable[..., Cluster]:
    def make(pool: dict[str, Any] | None = None, cluster: dict[str, Any] | None = None, **workload: Any) -> Cluster:
        data = copy.deepcopy(BASE)
        target = data["clusters"][0]
        target.update(cluster or {})
        target["nodePools"][0].update(pool or {})
        target["workloads"][0].update(workload)
        return load_fleet(data).clusters[0]

    return make
