"""What each workload claims on backend dra, and the values fragment that names it.

Whole GPUs and MIG devices: a ResourceClaimTemplate, so that every pod gets a claim of its own
(``demo/specs/quickstart/v1/gpu-test1.yaml``). Time-slicing and MPS: one ResourceClaim that all the
workload's pods name, since DRA shares a device only among the pods of one claim (``gpu-test3.yaml``).
Both request ``gpus`` devices of the pool's DeviceClass (``allocationMode: ExactCount``).

Names are derived from what the claim asks (``trainer.a100.mig-3g.20gb``, ``llm-finetune.h100.gpu.x8``):
the spec of a claim and of a template cannot change once created, so a workload that asks for something
else gets a new object and its fragment names it, and the old one is deleted once no pod uses it.

A shared claim's name also carries a digest of its DeviceClass's sharing config (``api.t4.gpu.3f2a9c1e``).
Kubernetes copies a class's config into the claim's ``status.allocation`` when it allocates the claim
(k8s.io/api resource/v1 ``DeviceAllocationConfiguration``, source ``FromClass``), and deallocates a claim that
no pod owns only once ``status.reservedFor`` is empty (kubernetes ``pkg/controller/resourceclaim``). A rolling
update always keeps a pod on the old claim, so a changed class config would never reach it; a new name gives
the workload's new pods a new claim, allocated with the class's config as it is now. Template claims need no
digest: each new pod gets a claim of its own, allocated then.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ....model.backends.dra import CLASS_DOMAIN, resource_api_version
from ....model.fleet import Cluster, Workload
from ...artifact import MANAGED_BY
from ...pod_spec import scheduling
from .device_classes import gpu_config

CONFIG_DIGEST_LENGTH = 8  # hex digits: enough to tell a pool's few config revisions apart

POD_CLAIM = "gpu"  # the name the pod's containers use for the claim (resources.claims[].name)
REQUEST = "gpu"  # the claim's one request


def claim_name(cluster: Cluster, workload: Workload) -> str:
    """``<workload>.<pool>.<kind>[.x<count>][.<config digest>]``: changes whenever the claim's spec would, and a
    shared claim's whenever its class's sharing config does."""
    ((device_class, count),) = cluster.workload_request(workload).items()
    name = f"{workload.name}.{device_class.removesuffix('.' + CLASS_DOMAIN)}"
    if count != 1:
        name += f".x{count}"
    if shares_claim(cluster, workload):
        canonical = json.dumps(gpu_config(cluster.pool_of(workload).sharing), sort_keys=True, separators=(",", ":"))
        name += "." + hashlib.sha256(canonical.encode()).hexdigest()[:CONFIG_DIGEST_LENGTH]
    return name


def shares_claim(cluster: Cluster, workload: Workload) -> bool:
    """The workload's pods share one ResourceClaim (time-slicing and MPS pools)."""
    return cluster.pool_of(workload).sharing.is_shared


def claim_object(cluster: Cluster, workload: Workload) -> dict[str, Any]:
    """The workload's ResourceClaimTemplate, or its shared ResourceClaim, in the cluster's API version."""
    api_version = resource_api_version(cluster.kubernetes)
    ((device_class, count),) = cluster.workload_request(workload).items()
    exact = {"deviceClassName": device_class, "allocationMode": "ExactCount", "count": count}
    # v1beta1 puts the request's fields on the request; v1beta2 and v1 nest them under `exactly` (k8s.io/api).
    request = {"name": REQUEST, **exact} if api_version.endswith("v1beta1") else {"name": REQUEST, "exactly": exact}
    claim_spec = {"devices": {"requests": [request]}}
    shared = shares_claim(cluster, workload)
    return {
        "apiVersion": api_version,
        "kind": "ResourceClaim" if shared else "ResourceClaimTemplate",
        "metadata": {
            "name": claim_name(cluster, workload),
            "namespace": workload.namespace,
            "labels": dict(MANAGED_BY),
        },
        "spec": claim_spec if shared else {"spec": claim_spec},
    }


def workload_values(cluster: Cluster, workload: Workload) -> dict[str, Any]:
    """The fragment: the pod's claim (``resourceClaims``), its containers' use of it, and the scheduling."""
    source = "resourceClaimName" if shares_claim(cluster, workload) else "resourceClaimTemplateName"
    values = scheduling(cluster, workload, {"claims": [{"name": POD_CLAIM}]})
    claims = [{"name": POD_CLAIM, source: claim_name(cluster, workload)}]
    return {"resources": values.pop("resources"), "resourceClaims": claims, **values}
