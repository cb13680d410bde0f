"""Invariants of the DRA backend over generated fleets: whatever loads renders (every object validated), every
fragment names a claim that is rendered, of the kind its pool's sharing calls for, in its namespace, every
claim names a rendered DeviceClass, and the driver turns on exactly the feature gates the pools use."""

from __future__ import annotations

from typing import Any

from dra_fleets import dra_fleets
from hypothesis import HealthCheck, event, given, settings

from gpustack_gen import FleetError, load_fleet, render


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
