"""The alerting rules of one cluster, from what the fleet says each pool's nodes advertise.

Signals and their caveats: kube-state-metrics' node, label and DaemonSet metrics, and dcgm-exporter's
memory gauges (``DCGM_FI_DEV_FB_USED``/``_FREE``/``_RESERVED`` in MiB, enabled by default in dcgm-exporter
4.5.3-4.8.2 ``etc/default-counters.csv``; ``Hostname`` is the node name under the GPU Operator, which sets
``NODE_NAME``). A node at 0 or with no allocatable series at all counts as advertising nothing: the kubelet
keeps a resource whose plugin left at 0, and a plugin that never registered leaves no series.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..artifact import MIG_CONFIG_LABEL, MIG_CONFIG_STATE_LABEL
from .promql import label_metric_name, matchers, quoted, regex_alternatives, sanitized, template_literal

if TYPE_CHECKING:
    from ...model.fleet import Cluster, Pool

# Karpenter taints a node it is replacing (kubernetes-sigs/karpenter@v1.14.1 designing/disruption.md:16-33).
KARPENTER_DISRUPTED_TAINT = "karpenter.sh/disrupted"
POOL_BELOW_INTENT_FOR = "30m"  # longer than a batch of a rollout: a stuck rollout still warns
PLUGIN_UNAVAILABLE_FOR = "15m"
UNHEALTHY_FOR = "10m"
MIG_FAILED_FOR = "5m"
MEMORY_FULL_FOR = "5m"
NO_POOL_NODES_FOR = "30m"


def verify_command(cluster: Cluster) -> str:
    return shlex.join(["gpustack-gen", "verify", cluster.alerts.fleet_file, "--cluster", cluster.name])


def pool_nodes(pool: Pool) -> str:
    """One series per node of the pool (value 1, label ``node``), from its nodeSelector's labels."""
    selector = matchers((label_metric_name(k), v) for k, v in pool.node_selector)
    return f"max by (node) (kube_node_labels{selector})"


# A node the plan has cordoned (kubectl cordon sets spec.unschedulable) or Karpenter is replacing is expected to
# lose its GPUs for a while: the per-node rules leave it out.
EXPECTED_AWAY = (
    "unless on (node) (max by (node) (kube_node_spec_unschedulable) == 1) "
    f"unless on (node) (max by (node) (kube_node_spec_taint{matchers([('key', KARPENTER_DISRUPTED_TAINT)])}))"
)


def _rule(
    cluster: Cluster, alert: str, expr: str, duration: str, severity: str, summary: str, description: str, **labels: str
) -> dict[str, Any]:
    command = template_literal(verify_command(cluster))
    return {
        "alert": alert,
        "expr": expr,
        "for": duration,
        "labels": {"severity": severity, "cluster": cluster.name, **labels},
        "annotations": {
            "summary": summary,
            "description": description,
            "runbook": f"Run {command} from the fleet's repository: it checks each node of cluster {cluster.name} "
            "against the fleet and names the likely cause and the fix.",
        },
    }


def node_rules(cluster: Cluster, pool: Pool) -> Iterator[dict[str, Any]]:
    """A node of the pool advertising none of its resources (the write-up's node at ``nvidia.com/gpu: 0``), one
    whose capacity exceeds its allocatable (devices there but unhealthy), and the pool advertising less than the
    fleet says."""
    per_node = cluster.allocatable_per_node(pool)
    if not per_node:
        return
    nodes = pool_nodes(pool)
    names = regex_alternatives(sanitized(r) for r in per_node)
    advertised = f"sum by (node) (kube_node_status_allocatable{{resource=~{quoted(names)}}})"
    shown = ", ".join(f"{count} {resource}" for resource, count in per_node.items())
    yield _rule(
        cluster,
        "GPUNodeAdvertisesNoGPUs",
        f"{nodes} unless on (node) ({advertised} > 0) {EXPECTED_AWAY}",
        cluster.alerts.node_at_zero_for,
        "critical",
        f"Node {{{{ $labels.node }}}} of pool {pool.name} in cluster {cluster.name} advertises no GPUs",
        f"The fleet says each node of pool {pool.name} advertises {shown}; node {{{{ $labels.node }}}} has "
        f"advertised none for {cluster.alerts.node_at_zero_for} (its device plugin did not register, or lost the GPUs).",
        pool=pool.name,
    )
    capacity = advertised.replace("allocatable", "capacity")
    yield _rule(
        cluster,
        "GPUNodeDevicesUnhealthy",
        f"({capacity} > {advertised}) and on (node) {nodes} {EXPECTED_AWAY}",
        UNHEALTHY_FOR,
        "warning",
        f"Node {{{{ $labels.node }}}} of pool {pool.name} in cluster {cluster.name} has GPUs it does not offer",
        "Its capacity counts more devices than its allocatable: the device plugin reports some unhealthy (an XID "
        "error, a lost GPU), or it disconnected less than the kubelet's 5 minutes ago.",
        pool=pool.name,
    )
    for resource, count in per_node.items():
        alloc = f"kube_node_status_allocatable{matchers([('resource', sanitized(resource))])}"
        yield _rule(
            cluster,
            "GPUPoolBelowIntent",
            f"(sum({alloc} * on (node) group_left () {nodes}) or vector(0)) < {count} * count({nodes})",
            POOL_BELOW_INTENT_FOR,
            "warning",
            f"Pool {pool.name} in cluster {cluster.name} advertises fewer {resource} than the fleet says",
            f"The pool's nodes advertise {{{{ $value }}}} {resource} together; the fleet says {count} per node.",
            pool=pool.name,
            resource=resource,
        )


def plugin_rule(cluster: Cluster, namespace: str, daemonset: str) -> dict[str, Any]:
    metric = f"kube_daemonset_status_number_unavailable{matchers([('namespace', namespace), ('daemonset', daemonset)])}"
    return _rule(
        cluster,
        "GPUDevicePluginUnavailable",
        f"{metric} > 0",
        PLUGIN_UNAVAILABLE_FOR,
        "warning",
        f"DaemonSet {namespace}/{daemonset} in cluster {cluster.name} has {{{{ $value }}}} unavailable pods",
        f"DaemonSet {namespace}/{daemonset} advertises the GPUs: on a node without its pod, new GPU pods stay Pending.",
    )


def mig_rule(cluster: Cluster) -> dict[str, Any]:
    state = matchers([(label_metric_name(MIG_CONFIG_STATE_LABEL), "failed")])
    return _rule(
        cluster,
        "GPUMigConfigFailed",
        f"max by (node) (kube_node_labels{state}) {EXPECTED_AWAY}",
        MIG_FAILED_FOR,
        "critical",
        f"The MIG manager failed to apply {MIG_CONFIG_LABEL} on node {{{{ $labels.node }}}} in cluster {cluster.name}",
        f"{MIG_CONFIG_STATE_LABEL}=failed: the node's GPUs are not partitioned as its {MIG_CONFIG_LABEL} label says.",
    )


def memory_rule(cluster: Cluster, pool: Pool) -> dict[str, Any]:
    def fb(field: str) -> str:
        return f"max by (Hostname, gpu) (DCGM_FI_DEV_FB_{field})"

    used = fb("USED")
    ratio = f"{used} / ({used} + {fb('FREE')} + {fb('RESERVED')})"
    on_pool = f'label_replace({pool_nodes(pool)}, "Hostname", "$1", "node", "(.+)")'
    threshold = cluster.alerts.gpu_memory_percent / 100
    return _rule(
        cluster,
        "GPUMemoryNearlyFull",
        f"{ratio} * on (Hostname) group_left () {on_pool} > {threshold:g}",
        MEMORY_FULL_FOR,
        "warning",
        f"GPU {{{{ $labels.gpu }}}} of node {{{{ $labels.Hostname }}}} (pool {pool.name}) is "
        "{{ $value | humanizePercentage }} full",
        f"Pool {pool.name} is time-sliced: pods sharing a GPU share its memory, and one pod can run the others out of "
        f"memory. Above {cluster.alerts.gpu_memory_percent}% the next allocation may fail.",
        pool=pool.name,
    )


def labels_missing_rule(cluster: Cluster, pool: Pool) -> dict[str, Any]:
    selector = matchers((label_metric_name(k), v) for k, v in pool.node_selector)
    return _rule(
        cluster,
        "GPUPoolNodesNotSeen",
        f"absent(kube_node_labels{selector})",
        NO_POOL_NODES_FOR,
        "warning",
        f"No node of pool {pool.name} in cluster {cluster.name} is seen by the alerts",
        f"The fleet says pool {pool.name} has {pool.nodes} nodes, but kube-state-metrics shows no node with its "
        "labels: the pool has no nodes, or kube-state-metrics does not allowlist the labels, and the pool's other "
        "alerts cannot fire.",
        pool=pool.name,
    )


def cluster_rules(
    cluster: Cluster, plugin: tuple[str, str], pool_labels: dict[str, dict[str, str]]
) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = []
    for pool in cluster.pools:
        rules += node_rules(cluster, pool)
        if pool.sharing.strategy == "time-slicing":
            rules.append(memory_rule(cluster, pool))
        if pool.nodes > 0:
            rules.append(labels_missing_rule(cluster, pool))
    rules.append(plugin_rule(cluster, *plugin))
    if any(MIG_CONFIG_LABEL in labels for labels in pool_labels.values()):
        rules.append(mig_rule(cluster))
    return rules


def allowlisted_labels(cluster: Cluster, pool_labels: dict[str, dict[str, str]]) -> list[str]:
    """The node labels the rules read from ``kube_node_labels``, which kube-state-metrics must allowlist."""
    keys = {key for pool in cluster.pools for key, _ in pool.node_selector}
    if any(MIG_CONFIG_LABEL in labels for labels in pool_labels.values()):
        keys.add(MIG_CONFIG_STATE_LABEL)
    return sorted(keys)
