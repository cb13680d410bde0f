"""Semantic checks of a resolved cluster: MIG geometry, workloads, capacity, names, sharing limits."""

from __future__ import annotations

from ..catalog import (
    builtin_mig_config,
    builtin_mig_config_names,
    place_layout,
    suggest_profiles,
)
from ..yamlio.source import PathKey
from .fleet import Cluster, Pool, Workload
from .resolve import ClusterOrigin, PoolOrigin, Report

MAX_TIME_SLICING_REPLICAS = 128  # each replica is a device the kubelet tracks; more is a typo, not a plan

# Labels gpustack-gen's node-labels command writes (`kubectl label nodes --selector <nodeSelector> ... --overwrite`):
# a selector on them selects nodes by the very value being rewritten, so new nodes never match and relabelled
# ones drop out of their own pool.
LABELS_GPUSTACK_GEN_SETS = ("nvidia.com/device-plugin.config", "nvidia.com/mig.config")
# Labels the device plugin / GPU Feature Discovery rewrites on nodes that share GPUs or use MIG
# (k8s-device-plugin internal/lm/resource.go): gpu.product gets -SHARED or -MIG-<profile> appended, and
# gpu.replicas and gpu.sharing-strategy change with the sharing policy.
LABELS_REWRITTEN_WHEN_SHARED = ("nvidia.com/gpu.product", "nvidia.com/gpu.replicas", "nvidia.com/gpu.sharing-strategy")
SELECTOR_HINT = "select on a label your node group sets, such as node.kubernetes.io/instance-type or a pool label"


def check_cluster(cluster: Cluster, origin: ClusterOrigin, report: Report) -> None:
    _check_unique_pools(cluster, origin, report)
    broken: set[str] = set()
    for pool, pool_path in zip(cluster.pools, origin.pool_paths, strict=True):
        pool_origin = origin.pools[pool.name]
        before = report.error_count()
        _check_selector_labels(pool, pool_path, report)
        _check_pool_sharing(cluster, pool, pool_origin, report)
        if report.error_count() > before or (pool.sharing.strategy == "mig" and not pool.mig_devices()):
            broken.add(pool.name)
    _check_workloads(cluster, origin, report, broken)


def _check_unique_pools(cluster: Cluster, origin: ClusterOrigin, report: Report) -> None:
    seen: dict[str, int] = {}
    unique: list[tuple[Pool, PathKey]] = []
    for pool, path in zip(cluster.pools, origin.pool_paths, strict=True):
        index = path[-1]
        assert isinstance(index, int)
        if pool.name in seen:
            report.error(
                (*path, "name"),
                f"duplicate pool name {pool.name!r} (also nodePools[{seen[pool.name]}])",
                "pool names are unique in a cluster",
            )
            continue
        seen[pool.name] = index
        unique.append((pool, path))
    _check_overlapping_selectors(unique, report)


def _check_overlapping_selectors(pools: list[tuple[Pool, PathKey]], report: Report) -> None:
    """A pool whose nodeSelector is a subset of another pool's (or equal to it) also selects that pool's nodes.

    The node labels and workloads of the subset pool would land on the other pool's nodes too. Reported at
    the subset pool's nodeSelector, once per pool; of two equal selectors, at the later one.
    """
    selectors = [frozenset(pool.node_selector) for pool, _ in pools]
    for index, (pool, path) in enumerate(pools):
        mine = selectors[index]
        for other_index, (other, _) in enumerate(pools):
            theirs = selectors[other_index]
            if other_index == index or not mine <= theirs or (mine == theirs and other_index > index):
                continue
            if mine == theirs:
                message = f"pool {pool.name!r} has the same nodeSelector as pool {other.name!r}"
            else:
                extra = ", ".join(f"{k}={v}" for k, v in sorted(theirs - mine))
                message = (
                    f"the nodeSelector of pool {pool.name!r} also matches the nodes of pool {other.name!r} "
                    f"(which adds {extra}): node labels and workloads meant for {pool.name!r} would land on both pools"
                )
            report.error(
                (*path, "nodeSelector"),
                message,
                "each pool needs labels that select only its own nodes",
            )
            break


def _check_selector_labels(pool: Pool, path: PathKey, report: Report) -> None:
    """Refuse selector labels that gpustack-gen or the NVIDIA components set or rewrite on the pool's nodes."""
    for key, _ in pool.node_selector:
        if key in LABELS_GPUSTACK_GEN_SETS:
            report.error(
                (*path, "nodeSelector", key),
                f"pool {pool.name!r} selects its nodes by {key}, a label gpustack-gen sets on them "
                "(node-labels.yaml): relabelling would unselect the pool's own nodes, and new nodes would never match",
                SELECTOR_HINT,
                key=True,
            )
        elif key in LABELS_REWRITTEN_WHEN_SHARED and (pool.sharing.is_shared or pool.sharing.strategy == "mig"):
            report.error(
                (*path, "nodeSelector", key),
                f"pool {pool.name!r} uses {pool.sharing.strategy}, so the device plugin rewrites {key} on its nodes "
                "(gpu.product gets a -SHARED or -MIG-<profile> suffix, gpu.replicas and gpu.sharing-strategy follow "
                "the policy): workloads given this nodeSelector would stay Pending",
                SELECTOR_HINT,
                key=True,
            )


def _check_pool_sharing(cluster: Cluster, pool: Pool, origin: PoolOrigin, report: Report) -> None:
    sharing = pool.sharing
    gpu = pool.gpu
    strategy_path = origin.sharing.get("strategy", origin.sharing_path)
    release = cluster.operator.release
    if sharing.strategy in ("time-slicing", "mps"):
        replicas_path = origin.sharing.get("replicas", origin.sharing_path)
        limit = gpu.mps_max_replicas if sharing.strategy == "mps" else MAX_TIME_SLICING_REPLICAS
        if sharing.replicas > limit:
            report.error(
                replicas_path,
                f"{sharing.replicas} replicas is more than {sharing.strategy} allows on {gpu.name} (at most {limit})",
                "a handful of pods per GPU is typical: 2 to 8",
            )
        report.warn(
            strategy_path,
            f"{sharing.strategy} on pool {pool.name!r} gives no memory isolation: pods sharing "
            "a GPU share its memory, and one pod can run the others out of memory",
            "use MIG on GPUs that have it for isolation"
            if gpu.mig_capable
            else "size each pod's GPU memory use to 1/replicas of the GPU",
        )
    if sharing.strategy == "mps":
        if not release.has_mps:
            report.error(
                strategy_path,
                f"MPS needs GPU Operator v24.3.0 or newer (pinned: {release.version})",
                "pin operator.version to v24.3.0 or newer, or use time-slicing",
            )
        if cluster.mig_strategy == "mixed":
            report.error(
                strategy_path,
                "MPS cannot be used in a cluster whose mig.strategy is mixed: the Operator "
                "passes MIG_STRATEGY to every device plugin, and the plugin refuses MPS under mixed",
                "use mig.strategy: single in this cluster, or time-slicing on this pool",
            )
    if sharing.strategy != "mig":
        return
    if not gpu.mig_capable:
        report.error(strategy_path, f"{gpu.name} has no MIG", "use time-slicing or mps to share it")
        return
    if sharing.mig_config is not None:
        _check_builtin_config(cluster, pool, origin, report)
        return
    if not sharing.mig_layout:
        return  # "mig needs a layout or a config" was reported while resolving
    layout = dict(sharing.mig_layout)
    layout_path = origin.sharing.get("layout", origin.sharing_path)
    unknown = [name for name in layout if gpu.profile(name) is None]
    for name in unknown:
        close = suggest_profiles(gpu, name)
        report.error(
            (*layout_path, name),
            f"{gpu.name} has no MIG profile {name!r}",
            f"did you mean {' or '.join(repr(c) for c in close)}?"
            if close
            else f"its profiles: {', '.join(gpu.profile_names())}",
            key=True,
        )
    if unknown:
        return
    placement = place_layout(gpu, layout)
    if not placement.ok:
        report.error(
            layout_path,
            f"this layout cannot be created on one {gpu.name}: {placement.reason}",
            "fewer or smaller instances; `gpustack-gen gpus " + gpu.id + "` lists the profiles",
        )
    elif not placement.verified:
        report.warn(
            layout_path,
            f"MIG placement on {gpu.name} is not verified on hardware; the layout fits its slice totals",
            "check it with `nvidia-smi mig -lgipp` on one node before rolling out",
        )
    if cluster.mig_strategy == "single" and len(layout) > 1:
        report.error(
            layout_path,
            f"mig.strategy single allows one MIG profile type per node; this layout has {len(layout)}",
            "set the cluster's mig.strategy: mixed, or use one profile",
        )


def _check_builtin_config(cluster: Cluster, pool: Pool, origin: PoolOrigin, report: Report) -> None:
    gpu = pool.gpu
    name = pool.sharing.mig_config or ""
    path = origin.sharing.get("config", origin.sharing_path)
    entry = builtin_mig_config(gpu, name)
    if entry is None:
        import difflib

        names = builtin_mig_config_names(gpu)
        close = difflib.get_close_matches(name, names, n=2, cutoff=0.5)
        report.error(
            path,
            f"the Operator has no built-in MIG config {name!r} for {gpu.name}",
            f"did you mean {' or '.join(repr(c) for c in close)}?" if close else f"its configs: {', '.join(names)}",
        )
        return
    if not entry.mig_enabled or not entry.mig_devices:
        report.error(
            path,
            f"{name} creates no MIG devices, so the pool would advertise no GPUs",
            "use strategy: none for whole GPUs, or a config such as all-balanced",
        )
        return
    if cluster.mig_strategy == "single" and len(entry.mig_devices) > 1:
        report.error(
            path,
            f"{name} creates {len(entry.mig_devices)} MIG profile types on {gpu.name}, but mig.strategy "
            "single allows one per node",
            "set the cluster's mig.strategy: mixed, or use an all-<profile> config",
        )


def _check_workloads(cluster: Cluster, origin: ClusterOrigin, report: Report, broken: set[str]) -> None:
    """Workload names, pools, profiles and capacity; workloads on pools already in error are not checked further."""
    seen: set[tuple[str, str]] = set()
    placed: list[Workload] = []  # the workloads whose request is known, for the capacity check
    pool_names = [p.name for p in cluster.pools]
    for index, workload in enumerate(cluster.workloads):
        path = (*origin.path, "workloads", index)
        key = (workload.namespace, workload.name)
        if key in seen:
            report.error(
                (*path, "name"),
                f"duplicate workload {workload.namespace}/{workload.name}",
                "workload names are unique per namespace in a cluster",
            )
            continue
        seen.add(key)
        if workload.pool in broken or workload.pool in origin.unresolved_pools:
            continue  # the pool's own error comes first; what it can offer is unknown
        pool = cluster.pool(workload.pool)
        if pool is None:
            import difflib

            close = difflib.get_close_matches(workload.pool, pool_names, n=1, cutoff=0.6)
            report.error(
                (*path, "pool"),
                f"no pool named {workload.pool!r} in cluster {cluster.name!r}",
                f"did you mean {close[0]!r}?" if close else f"pools: {', '.join(pool_names)}",
            )
            continue
        if not _check_workload_profile(cluster, pool, workload.mig_profile, path, report):
            continue
        sharing = pool.sharing
        if workload.gpus > 1 and sharing.strategy == "time-slicing" and sharing.fail_requests_greater_than_one:
            report.error(
                (*path, "gpus"),
                f"pool {pool.name!r} refuses requests for more than one shared GPU (failRequestsGreaterThanOne)",
                "ask for gpus: 1, or turn failRequestsGreaterThanOne off",
            )
        elif workload.gpus > 1 and sharing.strategy == "mps" and sharing.fail_requests_greater_than_one:
            report.error(
                (*path, "gpus"),
                f"pool {pool.name!r} uses MPS, which refuses requests for more than one replica",
                "ask for gpus: 1, or set the pool's failRequestsGreaterThanOne: false"
                if cluster.operator.mps_fail_requests_configurable
                else "ask for gpus: 1",
            )
        resource, count = cluster.workload_resource(workload)
        per_node = pool.resources_per_node(cluster.mig_strategy).get(resource, 0)
        if count > per_node:
            report.error(
                (*path, "gpus"),
                f"one pod asks for {count} {resource}, but a node of pool {pool.name!r} advertises {per_node}",
                "pods cannot span nodes; ask for fewer per pod",
            )
        placed.append(workload)
    for pool_name, requested in cluster.requested_by_pool(placed).items():
        pool = cluster.pool(pool_name)
        assert pool is not None
        totals = pool.resources_total(cluster.mig_strategy)
        for resource, wanted in requested.items():
            total = totals.get(resource, 0)
            if wanted > total:
                _report_capacity(cluster, pool, resource, wanted, total, placed, origin, report)


def _report_capacity(
    cluster: Cluster,
    pool: Pool,
    resource: str,
    wanted: int,
    total: int,
    placed: list[Workload],
    origin: ClusterOrigin,
    report: Report,
) -> None:
    """Pool ``pool`` has ``total`` of ``resource`` and its workloads ask for ``wanted``: say who asks for what."""
    who: list[str] = []
    for workload in placed:
        if workload.pool == pool.name:
            asked, count = cluster.workload_resource(workload)
            if asked == resource:
                who.append(f"{workload.name} {count * workload.replicas}")
    report.error(
        (*origin.pools[pool.name].path, "nodes"),
        f"workloads ask for {wanted} {resource} ({', '.join(who)}) but pool {pool.name!r} has {total}",
        "add nodes, raise the pool's sharing replicas, or lower the workloads' replicas"
        if pool.sharing.is_shared
        else "add nodes or GPUs per node, or lower the workloads' gpus or replicas",
    )


def _check_workload_profile(
    cluster: Cluster, pool: Pool, profile: str | None, path: tuple[str | int, ...], report: Report
) -> bool:
    devices = [name for name, _ in pool.mig_devices()]
    if profile is None:
        if pool.sharing.strategy == "mig" and cluster.mig_strategy == "mixed" and len(devices) > 1:
            report.error(
                path,
                f"pool {pool.name!r} offers several MIG profiles ({', '.join(devices)}); say which one",
                f"add migProfile: {devices[0]}",
            )
            return False
        return True
    if pool.sharing.strategy != "mig":
        report.error((*path, "migProfile"), f"pool {pool.name!r} does not use MIG", "remove migProfile")
        return False
    if profile not in devices:
        report.error(
            (*path, "migProfile"),
            f"pool {pool.name!r} has no MIG profile {profile!r} in its layout",
            f"the pool offers {', '.join(devices)}",
        )
        return False
    return True
