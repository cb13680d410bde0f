"""A DeviceClass or claim the render holds is missing from the cluster or holds another spec, a claim its pods share
is used by more pods than its pool's ``replicas``, or one gpustack-gen rendered once is left over.

Applies to clusters whose backend renders these objects (the DRA driver's: ``dra-device-classes.yaml``,
``dra-claims.yaml``). What the render sets is compared as data, and what only the cluster has is left alone:
the API server fills in defaults. On Kubernetes 1.33 kubectl may write claims in v1beta1, whose requests
carry their fields directly, where v1beta2 and v1 nest them under ``exactly`` (k8s.io/api): both read alike.
A claim's spec cannot change once created, and a ResourceClaim is reserved for each pod that uses it
(``status.reservedFor``); DRA bounds the number of those pods by 256 only, not by the pool's ``replicas``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...compile.artifact import MANAGED_BY
from ...compile.backends.dra.claims import claim_name, shares_claim
from ...errors import Severity
from ...k8s_state import DraObject
from ...k8s_state.objects import DRA_KINDS
from ...model.fleet import Cluster
from ...shell import Command, all_of, kubectl
from .. import commands
from ..expected import Expected
from ..model import Finding, differs, first_difference
from ..observed import Observed

ID = "dra-objects"
NEEDS = ("dra",)

Key = tuple[str, str | None, str]  # kind, namespace, name
_EXACT_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations")


def findings(expected: Expected, observed: Observed) -> Iterator[Finding]:
    cluster = expected.cluster
    apply_folder = kubectl("apply", "-k", f"{expected.rendered}/{cluster.name}")
    apply = commands.shown(cluster, apply_folder)
    found = {_key(o.kind, o.namespace, o.name): o for o in observed.state.dra or ()}
    rendered = {
        _key(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]): d
        for d in expected.objects
        if d.get("kind") in DRA_KINDS
    }
    for key, document in rendered.items():
        subject = _subject(key)
        live = found.get(key)
        if live is None:
            where = f"; namespace {key[1]} must exist, the render does not create it" if key[1] else ""
            yield Finding(ID, Severity.ERROR, subject, f"{subject}: absent", None, None, "applied", None, apply + where)
            continue
        difference = first_difference(_exactly(document["spec"]), _exactly(live.spec), "spec", defaults=True)
        if difference is not None:
            path, want, got = difference
            yield Finding(
                ID, Severity.ERROR, subject, differs(f"{subject}: {path}", want, got), None, None, want, got,
                _fix(cluster, key, apply_folder),
            )  # fmt: skip
    yield from _shared_claims(expected, found)
    managed = {key: o for key, o in found.items() if MANAGED_BY.items() <= o.labels.items() and key not in rendered}
    for key in sorted(managed, key=repr):
        subject = _subject(key)
        yield Finding(
            ID, Severity.WARNING, subject, f"{subject}: not in the render", None, None, None, "present",
            "a pool, profile or workload it served is gone; gpustack-gen plan deletes it once no pod uses it: "
            + commands.shown(cluster, _delete(key)),
        )  # fmt: skip


def _shared_claims(expected: Expected, found: dict[Key, DraObject]) -> Iterator[Finding]:
    """The ResourceClaims a workload's pods share: no more pods than the pool's ``replicas`` may use one."""
    cluster = expected.cluster
    for workload in cluster.workloads:
        pool = cluster.pool(workload.pool)
        if pool is None or not shares_claim(cluster, workload):
            continue
        key = _key("ResourceClaim", workload.namespace, claim_name(cluster, workload))
        live = found.get(key)
        if live is None or live.reserved_for <= pool.sharing.replicas:
            continue
        subject = _subject(key)
        yield Finding(
            ID, Severity.WARNING, subject,
            f"{subject}: reserved for {live.reserved_for} pods, and pool {pool.name} lets {pool.sharing.replicas} "
            "share a GPU",
            pool.name, None, pool.sharing.replicas, live.reserved_for,
            f"pods other than {workload.namespace}/{workload.name}'s name the claim, or a rollout runs old and new "
            "pods at once: no DRA object enforces the pool's replicas; "
            + commands.run(expected.cluster, "get", "resourceclaim", "-n", workload.namespace, key[2], "-o", "jsonpath={.status.reservedFor}")
            + " lists them",
        )  # fmt: skip


def _exactly(spec: Any) -> Any:
    """The spec with each v1beta1 request's fields nested under ``exactly``, as v1beta2 and v1 have them."""
    if isinstance(spec, dict):
        out = {key: _exactly(value) for key, value in spec.items()}
        requests = out.get("requests")
        if isinstance(requests, list):
            out["requests"] = [_request(request) for request in requests]
        return out
    if isinstance(spec, list):
        return [_exactly(item) for item in spec]
    return spec


def _request(request: Any) -> Any:
    if not isinstance(request, dict) or "exactly" in request or "deviceClassName" not in request:
        return request
    exact = {key: request[key] for key in _EXACT_FIELDS if key in request}
    return {**{k: v for k, v in request.items() if k not in _EXACT_FIELDS}, "exactly": exact}


def _key(kind: str, namespace: str | None, name: str) -> Key:
    return (kind, namespace if kind != "DeviceClass" else None, name)


def _subject(key: Key) -> str:
    kind, namespace, name = key
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def _delete(key: Key) -> Command:
    kind, namespace, name = key
    return kubectl("delete", kind.lower(), *(("-n", namespace) if namespace else ()), name)


def _fix(cluster: Cluster, key: Key, apply: Command) -> str:
    if key[0] == "DeviceClass":
        return f"{commands.shown(cluster, apply)} (a claim prepared before keeps the config it got: redeploy the pool's workloads)"
    return (
        "a claim's spec cannot change once created, and gpustack-gen names each claim after what it asks: this one "
        f"was changed by hand; once no pod uses it, {commands.shown(cluster, all_of(_delete(key), apply))}"
    )
