"""Generated fleets of one cluster on backend dra (for the property tests of compile and verify): pools of every
sharing strategy and the GPU models the DRA driver tells apart, workloads that may or may not fit, Kubernetes
1.32 to 1.35."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

GPUS = ("tesla-t4", "l4", "a100-40gb", "h100-80gb")
SHARING = {
    "none": {"strategy": "none"},
    "time-slicing": {"strategy": "time-slicing", "replicas": 3, "interval": "Medium"},
    "mps": {"strategy": "mps", "replicas": 2},
    "mig": {"strategy": "mig", "config": "all-balanced"},
}
MIG_PROFILES = {"a100-40gb": "1g.5gb", "h100-80gb": "1g.10gb"}  # in each model's all-balanced


@st.composite
def dra_fleets(draw: st.DrawFn) -> dict[str, Any]:
    pools = []
    for index in range(draw(st.integers(1, 3))):
        gpu = draw(st.sampled_from(GPUS))
        kinds = ["none", "time-slicing", "mps", *(["mig"] if gpu in ("a100-40gb", "h100-80gb") else [])]
        pools.append(
            {
                "name": f"p{index}",
                "gpu": gpu,
                "nodes": draw(st.integers(0, 3)),  # 0: every request is over capacity
                "gpusPerNode": draw(st.sampled_from([1, 2, 8])),
                "nodeSelector": {"pool": f"p{index}"},
                "sharing": SHARING[draw(st.sampled_from(kinds))],
            }
        )
    workloads = []
    for index in range(draw(st.integers(0, 4))):
        pool = draw(st.sampled_from(pools))
        workload = {
            "name": f"w{index}",
            "namespace": draw(st.sampled_from(["ml", "research"])),
            "pool": pool["name"],
            "replicas": draw(st.integers(0, pool["sharing"].get("replicas", 3))),
            "gpus": draw(st.integers(1, min(2, pool["gpusPerNode"]))),
        }
        if pool["sharing"]["strategy"] == "mig":
            workload["migProfile"] = MIG_PROFILES[pool["gpu"]]
        workloads.append(workload)
    kubernetes = draw(st.sampled_from(["1.32.4", "1.33.1", "1.34.2", "1.35.0"]))
    return {
        "apiVersion": "gpustack-gen/v1alpha1",
        "kind": "Fleet",
        "defaults": {"operator": {"version": "v26.7.0"}},
        "clusters": [
            {"name": "c", "kubernetes": kubernetes, "backend": "dra", "nodePools": pools, "workloads": workloads}
        ],
    }
