"""Tolerations for pool taints: the workloads' (per pool) and the operands' (every pool of the cluster).

A DaemonSet's pods tolerate only the not-ready, unreachable, pressure and unschedulable taints by themselves
(``kubernetes/kubernetes@v1.32.0 pkg/controller/daemon/util/daemonset_util.go:47-102``): any other taint of a
pool keeps the Operator's operands, HAMi's device plugin and the DRA kubelet plugin off its nodes unless the
chart's tolerations list it. Setting a chart's list replaces its default (Helm replaces lists), so the operands'
list is the chart's default plus what it lacks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..model.fleet import Cluster, Taint
from ..versions import Toleration


def toleration(taint: Taint) -> dict[str, Any]:
    """The toleration of exactly ``taint``."""
    return {
        "key": taint.key,
        "operator": "Equal" if taint.value is not None else "Exists",
        **({"value": taint.value} if taint.value else {}),
        "effect": taint.effect,
    }


def tolerates(entry: Mapping[str, Any], taint: Taint) -> bool:
    """Whether a toleration tolerates ``taint`` (``k8s.io/api core/v1 toleration.go ToleratesTaint``)."""
    if entry.get("effect") and entry["effect"] != taint.effect:
        return False
    if entry.get("key") and entry["key"] != taint.key:
        return False
    if entry.get("operator", "Equal") == "Exists":
        return True
    return bool(entry.get("key")) and entry.get("value", "") == (taint.value or "")


def cluster_taints(cluster: Cluster) -> tuple[Taint, ...]:
    """Every taint of the cluster's pools, once each, in a stable order."""
    found = {(t.key, t.value or "", t.effect): t for pool in cluster.pools for t in pool.taints}
    return tuple(found[key] for key in sorted(found))


def operand_tolerations(cluster: Cluster, chart_default: Sequence[Toleration]) -> list[dict[str, Any]] | None:
    """A chart's tolerations value for operands that must run on every pool: its default plus a toleration of each
    pool taint the default does not tolerate; None when it tolerates them all (the value is left to the chart)."""
    default = [entry._asdict() for entry in chart_default]
    missing = [t for t in cluster_taints(cluster) if not any(tolerates(entry, t) for entry in default)]
    if not missing:
        return None
    return [*default, *(toleration(t) for t in missing)]
