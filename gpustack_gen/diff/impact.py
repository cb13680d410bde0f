"""What a change does to a running cluster, computed from the two resolved intents.

Capacity per pool and resource, and findings classified by :class:`~.result.Level`, each with the
commands to run (from the render output folder, which holds one folder per cluster):

===================== =========== ==============================================================
rule                  level       when
===================== =========== ==============================================================
cluster-added         none        a cluster appears: install the Operator with its artifacts
cluster-removed       none        a cluster leaves the fleet: nothing is uninstalled
pool-added            none        a pool appears: its node group needs the pool's labels
pool-removed          disruptive  a pool leaves: drain its nodes before removing the node group
capacity              error       the pool's workloads ask for more than it advertises
driver                disruptive  driver enabled/version (or the chart's default version) changes
runtime               restart     container runtime, CDI, NRI or toolkit settings change
operator-version      restart     the GPU Operator chart version changes
pool-gpu              disruptive  a pool changes GPU model: its nodes are replaced
mig-layout            disruptive  a pool's MIG devices or ``nvidia.com/mig.config`` label change
device-plugin-config  restart     the device-plugin ConfigMap content changes
rename                disruptive  a pool stops advertising a resource its workloads asked for
workload-values       restart     a workload's values fragment changes: redeploying rolls its pods
node-labels           none        labels or selectors of node groups change
===================== =========== ==============================================================
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable

from ..compile.artifact import DEVICE_PLUGIN_DAEMONSET, MPS_DAEMONSET
from ..compile.nodes import DEVICE_PLUGIN_LABEL, MIG_CONFIG_LABEL, pool_labels
from ..compile.operator import VALUES_FILE, helm_upgrade_command
from ..compile.plan import ClusterPlan, plan_cluster
from ..compile.workloads import workload_values
from ..model.fleet import Cluster, Pool
from .result import CapacityChange, Finding, Level

TOOLKIT_DAEMONSET = "daemonset/nvidia-container-toolkit-daemonset"

RULE_ORDER = (
    "cluster-added",
    "cluster-removed",
    "capacity",
    "pool-removed",
    "pool-gpu",
    "driver",
    "mig-layout",
    "rename",
    "runtime",
    "operator-version",
    "device-plugin-config",
    "workload-values",
    "pool-added",
    "node-labels",
)


def cluster_impact(old: Cluster | None, new: Cluster | None) -> tuple[tuple[CapacityChange, ...], tuple[Finding, ...]]:
    """Capacity changes and findings of one cluster (either side may be absent: added or removed)."""
    capacity = _capacity_changes(old, new)
    findings: list[Finding] = []
    if new is not None:
        findings += _capacity_errors(new)
    if old is None and new is not None:
        findings.append(_cluster_added(new))
    elif new is None and old is not None:
        findings.append(
            Finding(
                "cluster-removed",
                Level.NONE,
                f"cluster {old.name} leaves the fleet: gpustack-gen stops rendering it; nothing is uninstalled",
            )
        )
    elif old is not None and new is not None:
        findings += _changed_cluster(old, new)
    order = {rule: i for i, rule in enumerate(RULE_ORDER)}
    findings.sort(key=lambda f: (-f.level.rank, order.get(f.rule, len(order)), f.pool or ""))
    return capacity, tuple(findings)


# --- capacity -----------------------------------------------------------------------------------


def _capacity_table(cluster: Cluster | None) -> dict[tuple[str, str], tuple[int, int]]:
    """(pool, resource) -> (advertised in total, asked by the pool's workloads)."""
    if cluster is None:
        return {}
    asked = cluster.requested_by_pool()
    table: dict[tuple[str, str], tuple[int, int]] = {}
    for pool in cluster.pools:
        wanted = asked.get(pool.name, {})
        totals = pool.resources_total(cluster.mig_strategy)
        for resource in totals.keys() | wanted.keys():
            table[(pool.name, resource)] = (totals.get(resource, 0), wanted.get(resource, 0))
    return table


def _capacity_changes(old: Cluster | None, new: Cluster | None) -> tuple[CapacityChange, ...]:
    before, after = _capacity_table(old), _capacity_table(new)
    changes = []
    for key in sorted(before.keys() | after.keys()):
        old_total, old_asked = before.get(key, (0, 0))
        new_total, new_asked = after.get(key, (0, 0))
        if (old_total, old_asked) != (new_total, new_asked):
            changes.append(CapacityChange(key[0], key[1], old_total, new_total, old_asked, new_asked))
    return tuple(changes)


def _capacity_errors(cluster: Cluster) -> list[Finding]:
    findings = []
    for (pool, resource), (total, asked) in sorted(_capacity_table(cluster).items()):
        if asked > total:
            who = [
                f"{w.namespace}/{w.name}"
                for w in cluster.workloads
                if w.pool == pool and cluster.workload_resource(w)[0] == resource
            ]
            findings.append(
                Finding(
                    "capacity",
                    Level.ERROR,
                    f"pool {pool}: workloads ask for {asked} {resource} but the pool advertises {total}",
                    pool,
                    tuple(sorted(who)),
                )
            )
    return findings


# --- cluster-level rules ------------------------------------------------------------------------


def _helm_upgrade_in_folder(cluster: Cluster) -> str:
    return helm_upgrade_command(cluster, f"{cluster.name}/{VALUES_FILE}", create_namespace=True)


def _cluster_added(cluster: Cluster) -> Finding:
    return Finding(
        "cluster-added",
        Level.NONE,
        f"cluster {cluster.name} joins the fleet: apply its ConfigMaps, install the GPU Operator "
        f"{cluster.operator.release.version} and label its node groups",
        None,
        tuple(pool.name for pool in cluster.pools),
        (f"kubectl apply -k {cluster.name}/", _helm_upgrade_in_folder(cluster)),
    )


def _changed_cluster(old: Cluster, new: Cluster) -> list[Finding]:
    old_plan, new_plan = plan_cluster(old), plan_cluster(new)
    old_pools = {p.name: p for p in old.pools}
    new_pools = {p.name: p for p in new.pools}
    common = [name for name in new_pools if name in old_pools]
    findings: list[Finding] = []
    for pool in new.pools:
        if pool.name not in old_pools:
            findings.append(_pool_added(new, new_plan, pool))
    for pool in old.pools:
        if pool.name not in new_pools:
            findings.append(_pool_removed(pool))
    findings += _operator_rules(old, new)
    same_gpu = []
    for name in common:
        before, after = old_pools[name], new_pools[name]
        if before.gpu.id != after.gpu.id:
            findings.append(
                Finding(
                    "pool-gpu",
                    Level.DISRUPTIVE,
                    f"pool {name} changes GPU model ({before.gpu.id} -> {after.gpu.id}): its nodes are replaced",
                    name,
                )
            )
        else:
            same_gpu.append(name)
    for name in same_gpu:
        finding = _mig_layout(old_pools[name], old_plan, new_pools[name], new_plan)
        if finding is not None:
            findings.append(finding)
    device_plugin = _device_plugin(old, old_plan, new, new_plan, common)
    if device_plugin is not None:
        findings.append(device_plugin)
    for name in common:
        finding = _rename(old, new, old_pools[name], new_pools[name])
        if finding is not None:
            findings.append(finding)
    workloads = _workload_values(old, new)
    if workloads is not None:
        findings.append(workloads)
    labels = _node_labels(old, old_plan, new, new_plan, common)
    if labels is not None:
        findings.append(labels)
    return findings


def _gpu_nodes(cluster: Cluster) -> str:
    nodes = sum(p.nodes for p in cluster.pools)
    return f"{nodes} GPU node{'s' if nodes != 1 else ''} in pools {', '.join(p.name for p in cluster.pools)}"


def _operator_rules(old: Cluster, new: Cluster) -> list[Finding]:
    before, after = old.operator, new.operator
    findings = []
    helm = _helm_upgrade_in_folder(new)
    ns = after.namespace
    release_changed = before.release.version != after.release.version
    driver_changes = []
    if before.driver_enabled != after.driver_enabled:
        driver_changes.append(f"driver.enabled {_flag(before.driver_enabled)} -> {_flag(after.driver_enabled)}")
    if after.driver_enabled and before.driver_enabled:
        if before.driver_version != after.driver_version:
            driver_changes.append(
                f"driver.version {before.driver_version or 'chart default'} -> {after.driver_version or 'chart default'}"
            )
        elif after.driver_version is None and release_changed:
            driver_changes.append(
                f"driver.version: chart default of {before.release.version} -> chart default of {after.release.version}"
            )
    if driver_changes:
        findings.append(
            Finding(
                "driver",
                Level.DISRUPTIVE,
                f"driver changes ({'; '.join(driver_changes)}): the driver pods roll and each GPU node is "
                f"cordoned and drained as the upgrade policy (driver.upgradePolicy) says; its GPU pods stop",
                None,
                tuple(p.name for p in new.pools),
                (helm, "kubectl get nodes -L nvidia.com/gpu-driver-upgrade-state"),
            )
        )
    runtime_changes = [
        f"{label} {_flag(a)} -> {_flag(b)}"
        for label, a, b in (
            ("containerRuntime", old.container_runtime, new.container_runtime),
            ("cdi.enabled", before.cdi_enabled, after.cdi_enabled),
            ("cdi.default", before.cdi_default, after.cdi_default),
            ("cdi.nriPluginEnabled", before.nri_plugin_enabled, after.nri_plugin_enabled),
            ("toolkit.enabled", before.toolkit_enabled, after.toolkit_enabled),
        )
        if a != b
    ]
    if runtime_changes:
        findings.append(
            Finding(
                "runtime",
                Level.RESTART,
                f"container runtime settings change ({'; '.join(runtime_changes)}): the toolkit reconfigures and "
                f"restarts the container runtime on every GPU node ({_gpu_nodes(new)})",
                None,
                tuple(p.name for p in new.pools),
                (helm, f"kubectl rollout status -n {ns} {TOOLKIT_DAEMONSET}"),
            )
        )
    if release_changed or before.namespace != after.namespace:
        what = []
        if release_changed:
            what.append(f"{before.release.version} -> {after.release.version}")
        if before.namespace != after.namespace:
            what.append(f"namespace {before.namespace} -> {after.namespace}")
        findings.append(
            Finding(
                "operator-version",
                Level.RESTART,
                f"GPU Operator changes ({'; '.join(what)}): its operand DaemonSets roll on every GPU node",
                None,
                (),
                (f"kubectl apply -k {new.name}/", helm),
            )
        )
    return findings


def _flag(value: object) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# --- pool rules ---------------------------------------------------------------------------------


def _selector(pool: Pool) -> str:
    return shlex.quote(",".join(f"{k}={v}" for k, v in pool.node_selector))


def _pool_added(cluster: Cluster, plan: ClusterPlan, pool: Pool) -> Finding:
    labels = pool_labels(cluster, plan)[pool.name]
    command = _label_command(pool, {}, labels)
    commands = (command,) if command else ()
    return Finding(
        "pool-added",
        Level.NONE,
        f"pool {pool.name} added ({pool.nodes} x {pool.gpus_per_node} {pool.gpu.id}): create its node group "
        f"with the selector labels {_selector(pool)}" + (" and the NVIDIA labels" if labels else ""),
        pool.name,
        (pool.name,),
        commands,
    )


def _pool_removed(pool: Pool) -> Finding:
    return Finding(
        "pool-removed",
        Level.DISRUPTIVE,
        f"pool {pool.name} removed: its {pool.nodes} nodes ({pool.physical_gpus} {pool.gpu.id} GPUs) leave the "
        "fleet; drain them before removing the node group",
        pool.name,
        (pool.name,),
        (f"kubectl drain --selector {_selector(pool)} --ignore-daemonsets --delete-emptydir-data",),
    )


def _mig_layout(old: Pool, old_plan: ClusterPlan, new: Pool, new_plan: ClusterPlan) -> Finding | None:
    old_label = old_plan.mig_config_label(old)
    new_label = new_plan.mig_config_label(new)
    if old.mig_devices() == new.mig_devices() and old_label == new_label:
        return None
    selector = _selector(new)
    commands = [f"kubectl drain --selector {selector} --ignore-daemonsets --delete-emptydir-data"]
    if new_label is not None:
        commands.append(f"kubectl label nodes --selector {selector} {MIG_CONFIG_LABEL}={new_label} --overwrite")
        commands.append(f"kubectl get nodes --selector {selector} -L {MIG_CONFIG_LABEL}.state")
    commands.append(f"kubectl uncordon --selector {selector}")
    return Finding(
        "mig-layout",
        Level.DISRUPTIVE,
        f"pool {new.name}: MIG layout changes ({_layout(old, old_label)} -> {_layout(new, new_label)}): the "
        f"{new.physical_gpus} GPUs of its {new.nodes} nodes are repartitioned and GPU pods on them are stopped; "
        "drain first",
        new.name,
        (new.name,),
        tuple(commands),
    )


def _layout(pool: Pool, label: str | None) -> str:
    devices = pool.mig_devices()
    if not devices:
        return label or "no MIG"
    text = ", ".join(name if count == 1 else f"{name} x{count}" for name, count in devices)
    return f"{label}: {text}" if label else text


def _device_plugin(
    old: Cluster, old_plan: ClusterPlan, new: Cluster, new_plan: ClusterPlan, common: list[str]
) -> Finding | None:
    if old_plan.device_plugin_configs == new_plan.device_plugin_configs:
        return None
    changed: list[tuple[str, str]] = []
    for name in common:
        old_key = old_plan.device_plugin_keys.get(name)
        new_key = new_plan.device_plugin_keys.get(name)
        old_config = old_plan.device_plugin_configs.get(old_key) if old_key else None
        new_config = new_plan.device_plugin_configs.get(new_key) if new_key else None
        if old_key != new_key:
            changed.append((name, f"{old_key or 'no config'} -> {new_key or 'no config'}"))
        elif old_config != new_config:
            changed.append((name, f"{new_key} changed"))
    ns = new.operator.namespace
    commands = [f"kubectl rollout restart -n {ns} {DEVICE_PLUGIN_DAEMONSET}"]
    uses_mps = any(p.sharing.strategy == "mps" for p in (*old.pools, *new.pools))
    if uses_mps:
        commands.append(f"kubectl rollout restart -n {ns} {MPS_DAEMONSET}")
    what = "device plugin and the MPS control daemon" if uses_mps else "device plugin"
    if changed:
        pools = ", ".join(f"{name} ({detail})" for name, detail in changed)
        subject = f"device-plugin config changes for pool{'s' if len(changed) != 1 else ''} {pools}"
    else:
        subject = "device-plugin ConfigMap changes"
    return Finding(
        "device-plugin-config",
        Level.RESTART,
        f"{subject}: restart the {what} after applying the ConfigMap (it does not reload it)",
        None,
        tuple(name for name, _ in changed),
        (f"kubectl apply -k {new.name}/", *commands),
    )


def _rename(old: Cluster, new: Cluster, old_pool: Pool, new_pool: Pool) -> Finding | None:
    before = set(old_pool.resources_per_gpu(old.mig_strategy))
    after = set(new_pool.resources_per_gpu(new.mig_strategy))
    lost = sorted(before - after)
    if not lost:
        return None
    users = sorted(
        f"{w.namespace}/{w.name}"
        for w in old.workloads
        if w.pool == old_pool.name and old.workload_resource(w)[0] in lost
    )
    now = ", ".join(sorted(after)) or "nothing"
    asking = f": {', '.join(users)}" if users else " (none in the fleet; check pods outside it)"
    return Finding(
        "rename",
        Level.DISRUPTIVE,
        f"pool {new_pool.name} stops advertising {', '.join(lost)} (now {now}): pods asking the old name "
        f"will not schedule until redeployed with their new values fragment{asking}",
        new_pool.name,
        tuple(users),
    )


def _workload_values(old: Cluster, new: Cluster) -> Finding | None:
    old_workloads = {(w.namespace, w.name): w for w in old.workloads}
    changed = []
    for workload in new.workloads:
        before = old_workloads.get((workload.namespace, workload.name))
        if before is None:
            continue
        if workload_values(old, before) != workload_values(new, workload):
            changed.append(workload)
    if not changed:
        return None
    names = sorted(f"{w.namespace}/{w.name}" for w in changed)
    return Finding(
        "workload-values",
        Level.RESTART,
        f"values fragments change for {', '.join(names)}: merging them into the services' chart values rolls their pods",
        None,
        tuple(names),
        tuple(
            f"helm upgrade <release> <chart> --reuse-values --values {new.name}/workloads/{w.file_stem}.yaml"
            for w in changed
        ),
    )


def _node_labels(
    old: Cluster, old_plan: ClusterPlan, new: Cluster, new_plan: ClusterPlan, common: Iterable[str]
) -> Finding | None:
    old_labels, new_labels = pool_labels(old, old_plan), pool_labels(new, new_plan)
    old_pools = {p.name: p for p in old.pools}
    new_pools = {p.name: p for p in new.pools}
    groups, commands, details = [], [], []
    for name in common:
        before, after = old_pools[name], new_pools[name]
        selector_changed = before.node_selector != after.node_selector
        labels_changed = old_labels[name] != new_labels[name]
        if not (selector_changed or labels_changed):
            continue
        groups.append(name)
        what = []
        if selector_changed:
            what.append(f"selector {_selector(before)} -> {_selector(after)}")
        for key in (DEVICE_PLUGIN_LABEL, MIG_CONFIG_LABEL):
            a, b = old_labels[name].get(key), new_labels[name].get(key)
            if a != b:
                what.append(f"{key} {a or 'unset'} -> {b or 'unset'}")
        details.append(f"{name} ({'; '.join(what)})")
        if labels_changed or selector_changed:
            command = _label_command(after, old_labels[name], new_labels[name])
            if command:
                commands.append(command)
    if not groups:
        return None
    return Finding(
        "node-labels",
        Level.NONE,
        f"node groups to update: {'; '.join(details)}; set the labels in each node group's template so new "
        "nodes get them",
        None,
        tuple(groups),
        tuple(commands),
    )


def _label_command(pool: Pool, old: dict[str, str], new: dict[str, str]) -> str | None:
    assignments = [shlex.quote(f"{k}={v}") for k, v in new.items()]
    assignments += [shlex.quote(f"{k}-") for k in old if k not in new]
    if not assignments:
        return None
    return f"kubectl label nodes --selector {_selector(pool)} {' '.join(assignments)} --overwrite"
