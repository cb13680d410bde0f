"""Alerts from intent: a ``PrometheusRule`` (``monitoring.coreos.com/v1``) per cluster, ``alerts.yaml``.

Upstream: prometheus-operator@v0.93.0 ``example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml``
(``spec.groups[]`` keyed by ``name``; each rule ``alert`` + ``expr``, ``for``, ``labels``, ``annotations``).
The group carries no ``labels`` or ``query_offset`` (Prometheus 3.0 and 2.53): labels are on each rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...shell import kubectl, text_in
from ..artifact import MANAGED_BY, Artifact
from ..backends import backend_of
from .rules import allowlisted_labels, cluster_rules

if TYPE_CHECKING:
    from ...model.fleet import Cluster

__all__ = ["ALERTS_FILE", "alerts_artifacts"]

ALERTS_FILE = "alerts.yaml"


def alerts_artifacts(cluster: Cluster) -> list[Artifact]:
    """The cluster's PrometheusRule, when its fleet asks for alerts."""
    if not cluster.alerts.enabled:
        return []
    backend = backend_of(cluster)
    pool_labels = backend.pool_labels(cluster)
    rule: dict[str, Any] = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {
            "name": f"gpustack-gen-{cluster.name}",
            "namespace": cluster.alerts.namespace,
            "labels": {**MANAGED_BY, **dict(cluster.alerts.rule_labels)},
        },
        "spec": {
            "groups": [
                {
                    "name": f"gpustack-gen.{cluster.name}",
                    "rules": cluster_rules(cluster, backend.plugin_daemonset(cluster), pool_labels),
                }
            ]
        },
    }
    allowlist = ",".join(allowlisted_labels(cluster, pool_labels))
    uncounted = [p.name for p in cluster.pools if not cluster.allocatable_per_node(p)]
    notes = [
        "What each pool's nodes must advertise, as Prometheus alerts: "
        f"{text_in(cluster.kube_context, kubectl('apply', '-f', 'alerts.yaml'))} (needs the",
        "Prometheus Operator's PrometheusRule CRD; its Prometheus must select these labels in ruleSelector).",
        f"kube-state-metrics shows node labels only when allowlisted: run it with --metric-labels-allowlist=nodes=[{allowlist}]",
        "(without it the rules that join on node labels never fire, and GPUPoolNodesNotSeen warns).",
        "GPUMemoryNearlyFull reads dcgm-exporter, whose Hostname must be the node name (the GPU Operator's is).",
        "A node that is cordoned (as gpustack-gen plan does) or being replaced by Karpenter does not page.",
    ]
    if uncounted:
        notes.append(
            f"No allocatable rules for {', '.join(uncounted)}: the DRA driver publishes devices in ResourceSlices, "
            "which kube-state-metrics does not count."
        )
    return [Artifact(ALERTS_FILE, "prometheus-rule", (rule,), tuple(notes))]
