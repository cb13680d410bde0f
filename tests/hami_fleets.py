"""HAMi fleets for the tests: one base cluster with pools of choice, and a strategy drawing valid-looking ones."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

T4 = {"name": "t4", "gpu": "tesla-t4", "nodes": 2, "nodeSelector": {"pool": "t4"}}


def hami_fleet(*pools: dict[str, Any], operator: dict[str, Any] | None = None, **cluster: Any) -> dict[str, Any]:
    return {
        "apiVersion": "gpustack-gen/v1alpha1",
        "kind": "Fleet",
        "clusters": [
            {
                "name": "c1",
                "kubernetes": "1.30.2",
                "backend": "hami",
                "operator": operator or {"version": "v25.3.3"},
                "nodePools": list(pools) or [{**T4, "sharing": {"strategy": "hami", "split": 5}}],
                **cluster,
            }
        ],
    }


@st.composite
def hami_fleets(draw: st.DrawFn) -> dict[str, Any]:
    """One HAMi cluster: pools of shared or whole GPUs, some naming their nodes, workloads with any shares."""
    pools = []
    for index in range(draw(st.integers(1, 3))):
        nodes = draw(st.integers(1, 3))
        pool: dict[str, Any] = {
            "name": f"p{index}",
            "gpu": draw(st.sampled_from(["tesla-t4", "l4", "a100-40gb", "v100"])),
            "nodes": nodes,
            "gpusPerNode": draw(st.integers(1, 4)),
            "nodeSelector": {"pool": f"p{index}"},
        }
        if draw(st.booleans()):
            sharing: dict[str, Any] = {"strategy": "hami", "split": draw(st.integers(1, 10))}
            if draw(st.booleans()):
                sharing["memoryScaling"] = draw(st.sampled_from([1, 1.5, 2]))
            pool["sharing"] = sharing
        if index and draw(st.booleans()):
            pool["nodeNames"] = [f"p{index}-{n}" for n in range(nodes)]
        pools.append(pool)
    workloads = []
    for index in range(draw(st.integers(0, 3))):
        workload: dict[str, Any] = {
            "name": f"w{index}",
            "namespace": "ml",
            "pool": draw(st.sampled_from([p["name"] for p in pools])),
            "replicas": draw(st.integers(0, 6)),
            "gpus": draw(st.integers(1, 2)),
        }
        share = draw(st.sampled_from(["none", "memory", "percent"]))
        if share == "memory":
            workload["gpuMemory"] = draw(st.sampled_from(["1Gi", "3Gi", "3000Mi", "20Gi"]))
        elif share == "percent":
            workload["gpuMemoryPercent"] = draw(st.integers(1, 100))
        if draw(st.booleans()):
            workload["gpuCores"] = draw(st.integers(1, 100))
        workloads.append(workload)
    operator = {"version": draw(st.sampled_from(["v24.9.2", "v25.3.3", "v26.7.0"]))}
    return hami_fleet(*pools, operator=operator, workloads=workloads)
