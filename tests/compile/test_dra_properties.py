"""Invariants of the DRA backend over generated fleets: whatever loads renders (every object validated), every
fragment names a claim that is rendered, of the kind its pool's sharing calls for, in its namespace, every
claim names a rendered DeviceClass, and the driver turns on exactly the feature gates the pools use."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from gpustack_gen import FleetError, load_fleet, render

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


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=dra_fleets())
def test_fragments_claims_and_classes_hold_together(data: dict[str, Any]) -> None:
    try:
        fleet = load_fleet(data)
    except FleetError:
        event("refused")
        return  # the checks' own tests cover refusals
    event("rendered")
    (cluster,) = fleet.clusters
    files = {path.split("/", 1)[1]: f for path, f in render(fleet).items()}
    classes = {d["metadata"]["name"] for d in files["dra-device-classes.yaml"].documents}
    claims = {
        (d["metadata"]["namespace"], d["metadata"]["name"]): d
        for d in (files["dra-claims.yaml"].documents if "dra-claims.yaml" in files else ())
    }
    for workload in cluster.workloads:
        pool = cluster.pool(workload.pool)
        assert pool is not None
        ((reference,),) = [files[f"workloads/{workload.file_stem}.yaml"].documents[0]["resourceClaims"]]
        shared = pool.sharing.is_shared
        name = reference["resourceClaimName" if shared else "resourceClaimTemplateName"]
        claim = claims[(workload.namespace, name)]
        assert claim["kind"] == ("ResourceClaim" if shared else "ResourceClaimTemplate")
        spec = claim["spec"] if shared else claim["spec"]["spec"]
        (request,) = spec["devices"]["requests"]
        exact = request.get("exactly", request)
        assert exact["deviceClassName"] in classes
        assert exact["count"] == workload.gpus
    gates = files["dra-driver-values.yaml"].documents[0]["featureGates"]
    used = {pool.sharing.strategy for pool in cluster.pools}
    assert set(gates) == {g for g, s in (("TimeSlicingSettings", "time-slicing"), ("MPSSupport", "mps")) if s in used}
