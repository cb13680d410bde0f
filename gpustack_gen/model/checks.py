"""Semantic checks of a resolved cluster: MIG geometry, workloads, capacity, names, sharing limits."""

from __future__ import annotations

import dataclasses

from ..catalog import (
    PRODUCT_LABEL,
    builtin_mig_config,
    builtin_mig_config_names,
    place_layout,
    suggest_profiles,
)
from ..catalog.profile_grammar import unreadable_profile
from ..errors import Severity
from ..suggest import suggest
from ..yamlio.source import PathKey, format_path
from .backends import SHARING_EXAMPLES, WORKLOAD_OPTIONS, backends_offering
from .fleet import DEFAULT_DEVICE_PLUGIN_KEY, Cluster, Pool, Workload
from .node_group_checks import check_node_groups
from .resolve import ClusterOrigin, PoolOrigin, Report

MAX_TIME_SLICING_REPLICAS = 128  # each replica is a device the kubelet tracks; more is a typo, not a plan

# Labels gpustack-gen's node-labels command writes (`kubectl label nodes --selector <nodeSelector> ... --overwrite`):
# a selector on them selects nodes by the very value being rewritten, so new nodes never match and relabelled
# ones drop out of their own pool.
LABELS_GPUSTACK_GEN_SETS = ("nvidia.com/device-plugin.config", "nvidia.com/mig.config")
# Labels the device plugin / GPU Feature Discovery sets from the sharing policy on nodes that share GPUs or use
# MIG (k8s-device-plugin internal/lm/resource.go): gpu.replicas and gpu.sharing-strategy follow the policy.
LABELS_REWRITTEN_WHEN_SHARED = ("nvidia.com/gpu.replicas", "nvidia.com/gpu.sharing-strategy")
SELECTOR_HINT = "select on a label your node group sets, such as node.kubernetes.io/instance-type or a pool label"


def check_cluster(cluster: Cluster, origin: ClusterOrigin, report: Report) -> None:
    _check_unique_pools(cluster, origin, report)
    broken: set[str] = set()
    for pool, pool_path in zip(cluster.pools, origin.pool_paths, strict=True):
        pool_origin = origin.pools[pool.name]
        before, found = report.error_count(), len(report.problems)
        _check_selector_labels(pool, pool_path, cluster.mig_strategy, report)
        _check_pool_sharing(cluster, pool, pool_origin, report)
        if report.error_count() > before or pool_origin.sharing_errors:
            # A pool in error gets its errors only: a warning about a policy that cannot be rendered is noise
            # (time-slicing's isolation warning beside "Tesla T4 has no MIG", for one).
            report.problems[found:] = [p for p in report.problems[found:] if p.severity is Severity.ERROR]
        if report.error_count() > before or (pool.sharing.strategy == "mig" and not pool.mig_devices()):
            broken.add(pool.name)
    _check_workloads(cluster, origin, report, broken)
    _check_retired(cluster, origin, report)
    cluster.semantics.check(cluster, origin, report)
    check_node_groups(cluster, origin, report)


def _check_retired(cluster: Cluster, origin: ClusterOrigin, report: Report) -> None:
    """Retired device-plugin keys must not shadow live ones; retired MIG configs must be valid for their GPU."""
    live = {DEFAULT_DEVICE_PLUGIN_KEY, *(pool.name for pool in cluster.pools)}
    base = (*origin.path, "retired")
    for key, _ in cluster.retired.device_plugin_configs:
        if key in live:
            what = "the default config of unlabelled nodes" if key == DEFAULT_DEVICE_PLUGIN_KEY else f"pool {key!r}'s"
            report.error(
                (*base, "devicePluginConfigs", key),
                f"{key!r} is a live device-plugin key ({what} config), so it cannot be retired",
                "remove this entry: the ConfigMap already holds the key",
                key=True,
            )
    # A retired config is what nodes carried under the old intent, maybe under another mig.strategy: only
    # that it exists for its GPU and can be placed matters, not whether the cluster's strategy could serve it.
    as_before = dataclasses.replace(cluster, mig_strategy="mixed")
    for index, entry in enumerate(cluster.retired.mig_configs):
        path = (*base, "migConfigs", index)
        pool = Pool(f"retired-{index}", entry.gpu, 0, 1, (), (), entry.sharing)
        pool_origin = PoolOrigin(path, {"layout": (*path, "layout"), "config": (*path, "config")}, path)
        _check_pool_sharing(as_before, pool, pool_origin, report)


def _check_unique_pools(cluster: Cluster, origin: ClusterOrigin, report: Report) -> None:
    seen: dict[str, int] = {}
    unique: list[tuple[Pool, PathKey]] = []
    for pool, path in zip(cluster.pools, origin.pool_paths, strict=True):
        index = path[-1]
        assert isinstance(index, int)
        if pool.name == DEFAULT_DEVICE_PLUGIN_KEY:
            report.error(
                (*path, "name"),
                f"pool name {DEFAULT_DEVICE_PLUGIN_KEY!r} is reserved: it names the device-plugin config of GPU nodes "
                "without the nvidia.com/device-plugin.config label (as in NVIDIA's time-slicing documentation)",
                "choose another name, such as gpu or default-pool",
            )
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


def _check_selector_labels(pool: Pool, path: PathKey, mig_strategy: str, report: Report) -> None:
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
                "(gpu.replicas and gpu.sharing-strategy follow the policy): workloads given this nodeSelector would "
                "stay Pending",
                SELECTOR_HINT,
                key=True,
            )
        elif key == PRODUCT_LABEL and (suffix := _product_label_suffix(pool, mig_strategy)):
            report.error(
                (*path, "nodeSelector", key),
                f"the device plugin appends {suffix} to {key} on the nodes of pool {pool.name!r}: workloads given "
                "this nodeSelector would stay Pending",
                SELECTOR_HINT,
                key=True,
            )


def _product_label_suffix(pool: Pool, mig_strategy: str) -> str:
    """What the device plugin's labeler appends to ``nvidia.com/gpu.product`` on the pool's nodes ("" for nothing).

    k8s-device-plugin internal/lm/mig-strategy.go: under mig.strategy single the MIG devices are labelled as
    nvidia.com/gpu with "-MIG-<profile>" appended; under mixed, MIG-enabled GPUs keep the plain product name
    (their devices are labelled under nvidia.com/mig-<profile>.*). internal/lm/resource.go: "-SHARED" is
    appended to a shared resource only when it is not renamed (renameByDefault).
    """
    sharing = pool.sharing
    if sharing.strategy == "mig" and mig_strategy == "single":
        return "-MIG-<profile> (mig.strategy single)"
    if sharing.is_shared and not sharing.rename_by_default:
        return f"-SHARED ({sharing.strategy} without renameByDefault)"
    return ""


def _pool_name(cluster: Cluster, pool: Pool) -> str:
    """How warnings name a pool: with its cluster, since warnings at a fleet default can concern several."""
    return f"pool {pool.name!r} in cluster {cluster.name!r}"


def _check_pool_sharing(cluster: Cluster, pool: Pool, origin: PoolOrigin, report: Report) -> None:
    if pool.sharing.strategy not in cluster.semantics.STRATEGIES:
        offering = backends_offering(pool.sharing.strategy)
        report.error(
            origin.sharing.get("strategy", origin.sharing_path),
            f"strategy {pool.sharing.strategy} does not exist on backend {cluster.backend} (cluster {cluster.name!r})",
            f"backend {cluster.backend} offers {', '.join(sorted(cluster.semantics.STRATEGIES))}"
            + (f"; set the cluster's backend: {offering[0]} for {pool.sharing.strategy}" if offering else ""),
        )
        return
    sharing = pool.sharing
    gpu = pool.gpu
    strategy_path = origin.sharing.get("strategy", origin.sharing_path)
    release = cluster.operator.release
    limits = cluster.semantics.DEVICE_PLUGIN_LIMITS
    for alias, path in origin.sharing.items():
        if alias != "strategy" and alias not in cluster.semantics.OPTIONS:
            report.warn(
                path,
                f"{alias} has no effect on backend {cluster.backend} ({_pool_name(cluster, pool)}), which does not "
                "read it",
                f"remove it; backend {cluster.backend} reads {', '.join(sorted(cluster.semantics.OPTIONS))}",
                key=True,
            )
    if sharing.strategy in ("time-slicing", "mps"):
        replicas_path = origin.sharing.get("replicas", origin.sharing_path)
        limit = gpu.mps_max_replicas if sharing.strategy == "mps" else MAX_TIME_SLICING_REPLICAS
        if sharing.replicas > limit:
            report.error(
                replicas_path,
                f"{sharing.replicas} replicas is more than {sharing.strategy} allows on {gpu.name} (at most {limit})",
                "a handful of pods per GPU is typical: 2 to 8",
            )
        # MPS limits each client as its backend says (the device plugin: 1/N of the memory and compute,
        # k8s-device-plugin README; the DRA driver: the GpuConfig's), but the clients share one MPS server.
        # An isolation text is "<level>: <what>".
        risk = (
            "gives no memory isolation: pods sharing a GPU share its memory, and one pod can run the others out of "
            "memory"
            if sharing.strategy == "time-slicing"
            else "gives no fault isolation: " + cluster.semantics.isolation(cluster, pool).partition(": ")[2]
        )
        report.warn(
            strategy_path,
            f"{sharing.strategy} on {_pool_name(cluster, pool)} {risk}",
            "use MIG on GPUs that have it for isolation"
            if gpu.mig_capable
            else "size each pod's GPU memory use to 1/replicas of the GPU"
            if sharing.strategy == "time-slicing"
            else "keep pods that must not fail together on different GPUs",
        )
    cluster.semantics.check_pool(cluster, pool, origin, strategy_path, report)
    if sharing.strategy == "mps" and cluster.mig_strategy == "mixed" and limits:
        report.error(
            strategy_path,
            "MPS cannot be used in a cluster whose mig.strategy is mixed: every device plugin of the cluster gets "
            "that migStrategy, and the plugin refuses MPS under mixed",
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
    for name in layout:
        unreadable = unreadable_profile(release, name)
        if unreadable is not None:
            report.error((*layout_path, name), *unreadable, key=True)
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
            f"MIG placement on {gpu.name} ({_pool_name(cluster, pool)}) is not verified on hardware; the layout "
            "fits its slice totals",
            "check it with `nvidia-smi mig -lgipp` on one node before rolling out",
        )
    if cluster.mig_strategy == "single" and len(layout) > 1 and limits:
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
        names = builtin_mig_config_names(gpu)
        close = suggest(name, names, n=2)
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
    for profile, _ in entry.mig_devices:
        unreadable = unreadable_profile(cluster.operator.release, profile)
        if unreadable is not None:
            report.error(path, *unreadable)
    if cluster.mig_strategy == "single" and len(entry.mig_devices) > 1 and cluster.semantics.DEVICE_PLUGIN_LIMITS:
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
            close = suggest(workload.pool, pool_names)
            report.error(
                (*path, "pool"),
                f"no pool named {workload.pool!r} in cluster {cluster.name!r}",
                f"did you mean {close[0]!r}?" if close else f"pools: {', '.join(pool_names)}",
            )
            continue
        if not _check_workload_profile(cluster, pool, workload.mig_profile, path, report):
            continue
        if not _check_workload_options(pool, origin.workload_options.get(key, ()), path, report):
            continue
        if not cluster.semantics.check_workload(cluster, pool, workload, path, report):
            continue
        if cluster.semantics.DEVICE_PLUGIN_LIMITS:  # elsewhere a claim for several devices gets distinct ones
            _check_shared_request(cluster, pool, workload, path, report)
        per_node = cluster.resources_per_node(pool)
        for resource, count in cluster.workload_request(workload).items():
            if count > per_node.get(resource, 0):
                report.error(
                    (*path, "gpus"),
                    f"one pod asks for {count} {resource}, but a node of pool {pool.name!r} advertises "
                    f"{per_node.get(resource, 0)}",
                    "pods cannot span nodes; ask for fewer per pod",
                )
        placed.append(workload)
    for pool_name, requested in cluster.requested_by_pool(placed).items():
        pool = cluster.pool(pool_name)
        assert pool is not None
        totals = cluster.resources_total(pool)
        for resource, wanted in requested.items():
            total = totals.get(resource, 0)
            if wanted > total:
                _report_capacity(cluster, pool, resource, total, placed, origin, report)


def _check_shared_request(cluster: Cluster, pool: Pool, workload: Workload, path: PathKey, report: Report) -> None:
    """A request for several GPUs of a shared pool, as the device plugin serves it."""
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
            if cluster.mps_fail_requests_configurable
            else "ask for gpus: 1",
        )
    elif workload.gpus > 1 and sharing.is_shared:
        # k8s-device-plugin README, "Shared Access to GPUs": a request for several replicas of a shared GPU
        # may be served by replicas of one GPU, and gets no more compute for it; failRequestsGreaterThanOne
        # exists to refuse such requests.
        report.warn(
            (*path, "gpus"),
            f"a pod asking for {workload.gpus} GPUs of {_pool_name(cluster, pool)}, which {sharing.strategy} "
            "shares, gets replicas that may all be slices of one GPU, with no more compute than one",
            "ask for gpus: 1, or set the pool's failRequestsGreaterThanOne: true to have such pods refused",
        )


def _report_capacity(
    cluster: Cluster,
    pool: Pool,
    resource: str,
    total: int,
    placed: list[Workload],
    origin: ClusterOrigin,
    report: Report,
) -> None:
    """The workloads of ``pool`` ask for more ``resource`` than its ``total``: located at the workload that
    takes the running total past it (in file order), naming every workload that asks."""
    who: list[str] = []
    wanted = 0
    overflowing: Workload | None = None
    for workload in placed:
        count = cluster.workload_total(workload).get(resource, 0)
        if workload.pool != pool.name or not count:
            continue
        who.append(f"{workload.name} {count}")
        wanted += count
        if overflowing is None and wanted > total:
            overflowing = workload
    assert overflowing is not None  # only called when the workloads ask for more than the total
    report.error(
        origin.workloads[(overflowing.namespace, overflowing.name)],
        f"workloads ask for {wanted} {resource} of pool {pool.name!r} ({', '.join(who)}), which has {total}: "
        f"{overflowing.name} takes the total past it",
        _capacity_hint(cluster, pool, resource),
    )


def _capacity_hint(cluster: Cluster, pool: Pool, resource: str) -> str:
    own = cluster.semantics.capacity_hint(pool, resource)
    if own is not None:
        return own
    if cluster.semantics.pods_share_request(cluster, pool):
        return (
            "each workload's claim holds its gpus devices whatever its pod count: add nodes, or run the pods of "
            "several workloads as one workload (up to the pool's replicas pods share its claim)"
        )
    if pool.sharing.is_shared:
        return "add nodes, raise the pool's sharing replicas, or lower the workloads' replicas"
    return "add nodes or GPUs per node, or lower the workloads' gpus or replicas"


def _check_workload_options(pool: Pool, given: tuple[str, ...], path: PathKey, report: Report) -> bool:
    """GPU memory and compute shares (a backend's workload options) exist on pools of the strategy giving them."""
    misplaced = [alias for alias in given if WORKLOAD_OPTIONS[alias] != pool.sharing.strategy]
    for alias in misplaced:
        strategy = WORKLOAD_OPTIONS[alias]
        offering = backends_offering(strategy)
        report.error(
            (*path, alias),
            f"{alias} needs a pool that shares GPUs by memory and compute (strategy {strategy}); pool {pool.name!r} "
            f"uses {pool.sharing.strategy}",
            f"give the pool sharing: {SHARING_EXAMPLES[strategy]} (backend {' or '.join(offering)}), or remove {alias}",
            key=True,
        )
    return not misplaced


def _check_workload_profile(
    cluster: Cluster, pool: Pool, profile: str | None, path: tuple[str | int, ...], report: Report
) -> bool:
    devices = [name for name, _ in pool.mig_devices()]
    if profile is None:
        # Under the device plugin's single strategy every profile is nvidia.com/gpu; elsewhere each has a name.
        named = cluster.mig_strategy == "mixed" or not cluster.semantics.DEVICE_PLUGIN_LIMITS
        if pool.sharing.strategy == "mig" and named and len(devices) > 1:
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


_MAX_POOLS_LISTED = 3


def check_unused_sharing_entries(resolved: list[tuple[Cluster, ClusterOrigin]], report: Report) -> None:
    """Warn about ``sharing`` entries of a cluster or of the fleet defaults that apply to pools but give none of
    them anything: more specific entries override every value they set (or start over with another strategy).

    Located at the entry, naming the entries that shadow it and their lines. Entries that apply to no pool at
    all (a default for a GPU model the cluster does not have) are policy for later, not mistakes.
    """
    applies: dict[PathKey, list[tuple[Cluster, Pool, PathKey]]] = {}  # entry -> (cluster, pool, the pool's own)
    used: set[PathKey] = set()
    for cluster, origin in resolved:
        for pool in cluster.pools:
            pool_origin = origin.pools[pool.name]
            # Each winning value's path is its entry's path plus the field name.
            given = {path[:-1] for path in pool_origin.sharing.values()}
            used |= given
            for index, entry in enumerate(pool_origin.sharing_entries):
                shadows = [e for e in pool_origin.sharing_entries[:index] if e in given]
                if shadows:
                    applies.setdefault(entry, []).extend((cluster, pool, shadow) for shadow in shadows)
    for entry, shadowed in applies.items():
        if entry in used:
            continue
        by_pool: dict[str, list[str]] = {}
        for cluster, pool, shadow in shadowed:
            where = f"{format_path(shadow)}, line {report.doc.locate(shadow)[0]}"
            by_pool.setdefault(_pool_name(cluster, pool), []).append(where)
        listed = [f"{name} (by {', '.join(dict.fromkeys(where))})" for name, where in by_pool.items()]
        more = f" and {len(listed) - _MAX_POOLS_LISTED} more pools" if len(listed) > _MAX_POOLS_LISTED else ""
        report.warn(
            entry,
            f"this sharing entry is never used: every value it sets is overridden for "
            f"{'; '.join(listed[:_MAX_POOLS_LISTED])}{more}",
            "remove it, or the values that override it",
            key=True,
        )
