"""Resolve a validated intent into a :class:`Fleet`: merge defaults, resolve sharing, look up models.

Each resolved value remembers the field path it came from, so that the semantic checks in
``checks`` can point at the line that must change.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..catalog import get_gpu, suggest_gpus
from ..errors import Problem, Severity
from ..suggest import suggest
from ..versions import format_version
from ..versions.gpu_operator import NEWEST_OPERATOR, OPERATOR_VERSIONS, UnknownOperatorVersion, require_operator_version
from ..yamlio.source import PathKey, SourceDocument
from . import intent
from .backends import (
    DEFAULT_BACKEND,
    OPTION_REASONS,
    RETIRED_REFUSALS,
    SHARING_OPTIONS,
    STRATEGIES,
    WORKLOAD_OPTIONS,
    BackendSemantics,
    check_sharing,
    semantics,
)
from .fleet import (
    DEFAULT_ALERTS_NAMESPACE,
    DEFAULT_SHARING_AUTO,
    DEFAULT_SHARING_NONE,
    MPS_FAIL_REQUESTS_CONFIGURABLE_FROM,
    WRAP_TARGETS,
    AdoptedConfigMaps,
    Alerts,
    ArgoCdDelivery,
    Cluster,
    Delivery,
    Drain,
    DriverUpgrade,
    FluxDelivery,
    HelmRelease,
    OperatorConfig,
    Pool,
    Retired,
    RetiredMigConfig,
    Sharing,
    Taint,
    Workload,
    canonical_mig_layout,
    mps_fail_requests_configurable,
)
from .names import KUBERNETES_VERSION

# Reads one cluster setting by its field names, the cluster's own over the fleet defaults: (value, its path).
Setting = Callable[..., tuple[Any, PathKey | None]]

DEFAULT_NAMESPACE = "gpu-operator"


@dataclass
class Report:
    """Problems found while resolving, located in the source document."""

    doc: SourceDocument
    problems: list[Problem] = field(default_factory=list)
    errors: int = 0  # errors among ``problems``, counted as they are added: checks ask for it per pool

    # How each warning in ``problems`` was located, by id() of the Problem (set when it is added): another
    # file with the same cluster locates the same warning again (model/share.py).
    warned: dict[int, tuple[PathKey, bool]] = field(default_factory=dict)

    def error(self, path: PathKey, message: str, hint: str = "", *, key: bool = False) -> None:
        self.problems.append(self.doc.problem(path, message, hint, key=key))
        self.errors += 1

    def error_count(self) -> int:
        return self.errors

    def warn(self, path: PathKey, message: str, hint: str = "", *, key: bool = False) -> None:
        problem = self.doc.problem(path, message, hint, key=key, severity=Severity.WARNING)
        self.warned[id(problem)] = (path, key)
        self.problems.append(problem)


@dataclass(frozen=True)
class PoolOrigin:
    """Where a pool and each field of its resolved sharing policy were written."""

    path: PathKey
    sharing: dict[str, PathKey]  # sharing field alias -> path of the value that won
    sharing_path: PathKey  # the most specific sharing entry that applies (or the pool, when none)
    sharing_entries: tuple[PathKey, ...] = ()  # every sharing entry that applies, most specific first
    sharing_errors: bool = False  # an error was reported while resolving the sharing policy


@dataclass(frozen=True)
class ClusterOrigin:
    path: PathKey
    pools: dict[str, PoolOrigin]
    workloads: dict[tuple[str, str], PathKey]
    fields: dict[str, PathKey]  # resolved cluster-level field -> path it came from
    unresolved_pools: frozenset[str] = frozenset()  # pools left out after an error (unknown GPU model)
    pool_paths: tuple[PathKey, ...] = ()  # the path of each pool of the resolved cluster, in its order
    # (namespace, name) -> the workload's keys of a backend's own it was given (model/backends WORKLOAD_OPTIONS)
    workload_options: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)


def _pick(*candidates: tuple[Any, PathKey]) -> tuple[Any, PathKey | None]:
    for value, path in candidates:
        if value is not None:
            return value, path
    return None, None


def _get(obj: Any, *names: str) -> Any:
    for name in names:
        if obj is None:
            return None
        obj = getattr(obj, name)
    return obj


def resolve_cluster(
    spec: intent.Cluster, index: int, defaults: intent.ClusterSettings | None, report: Report
) -> tuple[Cluster, ClusterOrigin] | None:
    """Merge the fleet defaults into one cluster and resolve it; None when it cannot be resolved."""
    here: PathKey = ("clusters", index)
    there: PathKey = ("defaults",)
    origins: dict[str, PathKey] = {}

    def setting(*names: str) -> tuple[Any, PathKey | None]:
        aliases = tuple(_alias(n) for n in names)
        value, path = _pick((_get(spec, *names), (*here, *aliases)), (_get(defaults, *names), (*there, *aliases)))
        if path is not None:
            origins[".".join(aliases)] = path
        return value, path

    kubernetes, k8s_path = setting("kubernetes")
    if kubernetes is None:
        report.error(here, f"cluster {spec.name!r} has no kubernetes version", 'add kubernetes: "1.29.15" (quoted)')
    elif not _matches(KUBERNETES_VERSION, kubernetes):
        assert k8s_path is not None
        report.error(
            k8s_path,
            f"{kubernetes!r} is not a Kubernetes version",
            'write major.minor.patch, quoted: "1.29.15"',
        )
    runtime, _ = setting("container_runtime")
    mig_strategy, _ = setting("mig", "strategy")
    operator = _resolve_operator(report, setting)
    delivery = _resolve_delivery(report, setting)
    if operator is None:
        return None
    backend = setting("backend")[0] or DEFAULT_BACKEND
    own = semantics(backend)

    pools: list[Pool] = []
    pool_paths: list[PathKey] = []
    pool_origins: dict[str, PoolOrigin] = {}
    unresolved: set[str] = set()
    for pool_index, pool_spec in enumerate(spec.node_pools):
        pool_path = (*here, "nodePools", pool_index)
        gpu = get_gpu(pool_spec.gpu)
        if gpu is None:
            close = suggest_gpus(pool_spec.gpu)
            hint = (
                f"did you mean {' or '.join(repr(c) for c in close)}?"
                if close
                else "run `gpustack-gen gpus` to list them"
            )
            report.error((*pool_path, "gpu"), f"unknown GPU model {pool_spec.gpu!r}", hint)
            unresolved.add(pool_spec.name)
            continue
        errors_before = report.error_count()
        sharing, sharing_origin, sharing_path, entries = _resolve_sharing(
            pool_spec, gpu.id, pool_path, spec, here, defaults, operator, own, report
        )
        in_error = report.error_count() > errors_before
        pool_paths.append(pool_path)
        pools.append(
            Pool(
                name=pool_spec.name,
                gpu=gpu,
                nodes=pool_spec.nodes,
                gpus_per_node=pool_spec.gpus_per_node,
                node_selector=tuple(pool_spec.node_selector.items()),
                taints=tuple(Taint(t.key, t.value, t.effect) for t in pool_spec.taints),
                sharing=sharing,
                drain=_drain(pool_spec.drain),
                backend_options=own.resolve_pool(spec, pool_spec, pool_path, report),
            )
        )
        pool_origins.setdefault(pool_spec.name, PoolOrigin(pool_path, sharing_origin, sharing_path, entries, in_error))

    workloads = tuple(
        Workload(
            name=w.name,
            namespace=w.namespace,
            pool=w.pool,
            gpus=w.gpus,
            replicas=w.replicas,
            mig_profile=w.mig_profile,
            cpu=None if w.cpu is None else str(w.cpu),
            memory=None if w.memory is None else str(w.memory),
            helm=None
            if w.helm is None
            else HelmRelease(w.helm.release, w.helm.chart, w.helm.version, tuple(w.helm.values_files or ())),
            backend_options=own.resolve_workload(w, (*here, "workloads", index), report),
        )
        for index, w in enumerate(spec.workloads)
    )
    workload_paths: dict[tuple[str, str], PathKey] = {}
    workload_options: dict[tuple[str, str], tuple[str, ...]] = {}
    for workload_index, w in enumerate(spec.workloads):
        workload_paths.setdefault((w.namespace, w.name), (*here, "workloads", workload_index))
        given = tuple(alias for alias in WORKLOAD_OPTIONS if getattr(w, _attribute(alias)) is not None)
        workload_options.setdefault((w.namespace, w.name), given)

    default_sharing, default_sharing_path = setting("default_sharing")
    if default_sharing is not None and default_sharing not in (DEFAULT_SHARING_AUTO, DEFAULT_SHARING_NONE):
        assert default_sharing_path is not None
        names = [p.name for p in spec.node_pools]
        if default_sharing not in names:
            close = suggest(default_sharing, names)
            report.error(
                default_sharing_path,
                f"defaultSharing {default_sharing!r} is neither auto, none nor a pool of cluster {spec.name!r}",
                f"did you mean {close[0]!r}?" if close else f"auto, none, or one of {', '.join(names)}",
            )
            default_sharing = None
    cluster = Cluster(
        name=spec.name,
        kube_context=spec.kube_context or spec.name,
        kubernetes=str(kubernetes or ""),
        container_runtime=runtime or "containerd",
        container_runtime_version=setting("container_runtime_version")[0],
        mig_strategy=mig_strategy or "single",
        operator=operator,
        pools=tuple(pools),
        workloads=workloads,
        semantics=own,
        delivery=delivery,
        default_sharing=default_sharing or DEFAULT_SHARING_AUTO,
        backend=backend,
        backend_options=own.resolve_options(report, setting),
        retired=_resolve_retired(spec, here, operator, report),
        node_group_provider=setting("node_groups", "provider")[0],
        alerts=_resolve_alerts(setting),
    )
    return cluster, ClusterOrigin(
        here, pool_origins, workload_paths, origins, frozenset(unresolved), tuple(pool_paths), workload_options
    )


def _drain(spec: intent.DrainPolicy | None) -> Drain:
    if spec is None:
        return Drain()
    return Drain(spec.max_unavailable, spec.timeout_minutes, spec.delete_pods_without_controller)


def _resolve_delivery(report: Report, setting: Any) -> Delivery:
    """Merge ``delivery`` (cluster over fleet defaults, field by field; ``wrap`` and ``destination`` whole)."""
    default_argocd, default_flux = ArgoCdDelivery(), FluxDelivery()
    wrap, _ = setting("delivery", "wrap")
    wanted = set(wrap or ())
    destination, destination_path = setting("delivery", "argocd", "destination")
    server, name = default_argocd.server, None
    if destination is not None:
        if destination.server is not None and destination.name is not None:
            report.error(
                destination_path,
                "an Argo CD destination takes server or name, not both",
                "keep name (the cluster as registered in Argo CD) or server (its API URL)",
            )
        if destination.server is not None or destination.name is not None:
            server, name = destination.server, destination.name
    automated, _ = setting("delivery", "argocd", "sync_policy", "automated")
    enabled, _ = setting("delivery", "argocd", "sync_policy", "automated", "enabled")
    prune, _ = setting("delivery", "argocd", "sync_policy", "automated", "prune")
    self_heal, _ = setting("delivery", "argocd", "sync_policy", "automated", "self_heal")
    project, _ = setting("delivery", "argocd", "project")
    argocd_namespace, _ = setting("delivery", "argocd", "namespace")
    argocd = ArgoCdDelivery(
        project=project or default_argocd.project,
        namespace=argocd_namespace or default_argocd.namespace,
        server=None if name is not None else server,
        name=name,
        automated=automated is not None and enabled is not False,
        prune=bool(prune),
        self_heal=bool(self_heal),
    )
    source, source_path = setting("delivery", "flux", "source")
    url, url_path = setting("delivery", "flux", "url")
    source = source or default_flux.source
    if source == "oci" and url is None:
        report.error(
            source_path,
            "NVIDIA documents no OCI location for released gpu-operator charts "
            "(oci://ghcr.io/nvidia/gpu-operator/charts only holds CI and release-candidate builds)",
            "use source: helm, or push the chart to your registry and set flux.url: oci://<registry>/<path>/gpu-operator",
        )
    elif source == "oci" and url is not None and not url.startswith("oci://"):
        report.error(url_path, f"an OCIRepository needs an oci:// URL, got {url!r}", "or use source: helm")
    elif source == "helm" and url is not None and url.startswith("oci://"):
        report.error(
            url_path, "an oci:// URL needs source: oci", "set flux.source: oci, or give an https:// repository"
        )
    interval, _ = setting("delivery", "flux", "interval")
    flux_namespace, _ = setting("delivery", "flux", "namespace")
    release_name, _ = setting("delivery", "flux", "release_name")
    flux = FluxDelivery(
        namespace=flux_namespace or default_flux.namespace,
        interval=interval or default_flux.interval,
        source=source,
        url=url,
        release_name=release_name or default_flux.release_name,
    )
    if {"argocd", "flux"} <= wanted:
        _, wrap_path = setting("delivery", "wrap")
        report.warn(
            wrap_path,
            "wrapped for both Argo CD and Flux: each cluster's kustomization.yaml lists the Application and the "
            "HelmRelease, so a controller applying it installs the chart through both",
            "keep one of argocd and flux per cluster, or apply the wrapper files one by one",
        )
    return Delivery(tuple(t for t in WRAP_TARGETS if t in wanted), argocd, flux)


def _resolve_alerts(setting: Any) -> Alerts:
    """Merge ``alerts`` (cluster over fleet defaults, field by field; ``ruleLabels`` whole)."""
    default = Alerts()
    labels, _ = setting("alerts", "rule_labels")
    return Alerts(
        enabled=bool(setting("alerts", "enabled")[0]),
        namespace=setting("alerts", "namespace")[0] or DEFAULT_ALERTS_NAMESPACE,
        rule_labels=tuple(sorted((labels or {}).items())),
        node_at_zero_for=setting("alerts", "node_at_zero_for")[0] or default.node_at_zero_for,
        gpu_memory_percent=setting("alerts", "gpu_memory_percent")[0] or default.gpu_memory_percent,
        fleet_file=setting("alerts", "fleet_file")[0] or default.fleet_file,
    )


@functools.cache
def _alias(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _attribute(alias: str) -> str:
    """The intent's attribute of fleet key ``alias`` (``gpuMemory`` -> ``gpu_memory``)."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in alias)


# (alias in the file, attribute) of every sharing option, in the model's field order.
_SHARING_ATTRIBUTES = tuple((_alias(name), name) for name in intent.SharingPolicy.model_fields)


def _matches(pattern: str, value: str) -> bool:
    import re

    return re.fullmatch(pattern, value) is not None


def _resolve_operator(report: Report, setting: Any) -> OperatorConfig | None:
    version_text, version_path = setting("operator", "version")
    release = NEWEST_OPERATOR
    if version_text is not None:
        try:
            release = require_operator_version(version_text)
        except UnknownOperatorVersion as unknown:
            report.error(version_path, str(unknown), unknown.hint)
            return None

    cdi_enabled, cdi_path = setting("operator", "cdi", "enabled")
    cdi_default, cdi_default_path = setting("operator", "cdi", "default")
    nri, nri_path = setting("operator", "cdi", "nri_plugin_enabled")
    driver_enabled, _ = setting("operator", "driver", "enabled")
    driver_version, driver_version_path = setting("operator", "driver", "version")
    toolkit_enabled, _ = setting("operator", "toolkit", "enabled")
    namespace, _ = setting("operator", "namespace")

    enabled = release.cdi_enabled_by_default if cdi_enabled is None else bool(cdi_enabled)
    if cdi_default is not None and not release.has_cdi_default:
        # A warning, not an error: a fleet that sets it would otherwise fail every Operator bump past v25.3.
        # The artifacts leave it out (OperatorConfig.cdi_default is None), as the v25.10+ charts do.
        report.warn(
            cdi_default_path,
            f"cdi.default has no effect from GPU Operator v25.10.0 (pinned: {release.version}): CDI is the "
            "default there, and the value is left out of the artifacts",
            "remove it",
        )
    elif cdi_default and not enabled:
        report.error(cdi_default_path, "cdi.default: true needs cdi.enabled: true", "enable CDI or remove cdi.default")
    if nri is not None and not release.has_nri_plugin:
        report.error(
            nri_path,
            f"cdi.nriPluginEnabled does not exist in GPU Operator {release.version}",
            "it arrived in v26.3.0; remove it or pin a newer operator.version",
        )
    elif nri and not enabled:
        report.error(nri_path, "the NRI plugin cannot be enabled when CDI is disabled", "set cdi.enabled: true")
    elif nri and toolkit_enabled is False:
        report.error(
            nri_path,
            "the NRI plugin runs in the toolkit DaemonSet, which is disabled",
            "set toolkit.enabled: true or turn the NRI plugin off",
        )
    if driver_enabled is False and driver_version is not None:
        report.warn(
            driver_version_path,
            f"driver.version {driver_version} has no effect: driver.enabled is false, so the Operator deploys "
            "no driver and the nodes' preinstalled one is used",
            "remove driver.version, or set driver.enabled: true to have the Operator install this version",
        )
    runtime, runtime_path = setting("container_runtime")
    if runtime == "cri-o" and not enabled:
        # Point at what the file says: cdi.enabled: false where written, else the containerRuntime line
        # (in the cluster or in the fleet defaults); never at a key the file does not have.
        report.warn(
            cdi_path or runtime_path,
            "CRI-O with CDI disabled uses the legacy OCI hook, behind the 'error executing hook "
            "nvidia-container-toolkit' and 'could not load NVML library' failures after Kubernetes upgrades",
            "set operator.cdi.enabled: true",
        )
    install, _ = setting("operator", "install")
    values_files, _ = setting("operator", "values_files")
    upgrade, _ = setting("operator", "driver", "upgrade_policy")
    adopt, _ = setting("operator", "adopt_from")
    return OperatorConfig(
        release=release,
        namespace=namespace or DEFAULT_NAMESPACE,
        cdi_enabled=enabled,
        cdi_default=(bool(cdi_default) if release.has_cdi_default else None),
        nri_plugin_enabled=(bool(nri) if release.has_nri_plugin else None),
        driver_enabled=True if driver_enabled is None else bool(driver_enabled),
        driver_version=driver_version,
        toolkit_enabled=True if toolkit_enabled is None else bool(toolkit_enabled),
        install=install or "helm",
        values_files=tuple(values_files or ()),
        driver_upgrade=DriverUpgrade()
        if upgrade is None
        else DriverUpgrade(upgrade.max_parallel_upgrades, upgrade.delete_empty_dir, upgrade.force),
        adopt_from=None if adopt is None else AdoptedConfigMaps(adopt.device_plugin_config, adopt.mig_config),
    )


def _sharing_levels(
    pool_spec: intent.NodePool,
    gpu_id: str,
    pool_path: PathKey,
    spec: intent.Cluster,
    here: PathKey,
    defaults: intent.ClusterSettings | None,
) -> Iterator[tuple[intent.SharingPolicy, PathKey]]:
    """Sharing entries that apply to a pool, most specific first."""
    if pool_spec.sharing is not None:
        yield pool_spec.sharing, (*pool_path, "sharing")
    for table, base in (
        (spec.sharing, (*here, "sharing")),
        (defaults.sharing if defaults else None, ("defaults", "sharing")),
    ):
        if not table:
            continue
        for key, policy in table.items():
            if key != "default" and _sharing_key_gpu(key) == gpu_id:
                yield policy, (*base, key)
        if "default" in table:
            yield table["default"], (*base, "default")


def _sharing_key_gpu(key: str) -> str | None:
    gpu = get_gpu(key)
    return gpu.id if gpu else None


def _resolve_sharing(
    pool_spec: intent.NodePool,
    gpu_id: str,
    pool_path: PathKey,
    spec: intent.Cluster,
    here: PathKey,
    defaults: intent.ClusterSettings | None,
    operator: OperatorConfig,
    backend: BackendSemantics,
    report: Report,
) -> tuple[Sharing, dict[str, PathKey], PathKey, tuple[PathKey, ...]]:
    """Merge the sharing entries that apply to one pool, least specific first.

    A partial entry merges over the entries below it. An entry starts over (drops what came from below)
    only when it names a strategy and the entries below already chose a different one: options of one
    strategy never leak into another, but ``{replicas: 4}`` below and ``{strategy: time-slicing}`` above
    give time-slicing with 4 replicas.
    """
    levels = list(_sharing_levels(pool_spec, gpu_id, pool_path, spec, here, defaults))
    merged: dict[str, Any] = {}
    origin: dict[str, PathKey] = {}
    for policy, path in reversed(levels):
        values = {alias: value for alias, name in _SHARING_ATTRIBUTES if (value := getattr(policy, name)) is not None}
        if "strategy" in values and "strategy" in merged and merged["strategy"] != values["strategy"]:
            # A different strategy starts over: options of the strategy it replaces do not carry over.
            merged, origin = {}, {}
        if "layout" in values or "config" in values:
            for alternative in ("layout", "config"):
                merged.pop(alternative, None)
                origin.pop(alternative, None)
        merged.update(values)
        origin.update({alias: (*path, alias) for alias in values})
    sharing_path = levels[0][1] if levels else pool_path
    strategy = merged.get("strategy")
    if strategy is None and merged:
        first = next(iter(origin.values()))
        report.error(
            first[:-1],
            f"sharing options ({', '.join(merged)}) are given but no strategy",
            f"add strategy: {_SHARED_STRATEGIES}",
        )
        # Reported once: checking the options against 'none' as well would only repeat it.
        merged, origin = {}, {}
    strategy = strategy or "none"
    sharing = Sharing(
        strategy=strategy,
        replicas=int(merged.get("replicas", 1)) if strategy in ("time-slicing", "mps") else 1,
        rename_by_default=bool(merged.get("renameByDefault", False)),
        fail_requests_greater_than_one=_fail_requests_greater_than_one(strategy, merged, origin, operator, report),
        mig_layout=canonical_mig_layout(merged.get("layout", {}).items()) if strategy == "mig" else (),
        mig_config=merged.get("config") if strategy == "mig" else None,
        backend_options=backend.resolve_sharing(strategy, merged),
    )
    _check_sharing_fields(strategy, merged, origin, sharing_path, report)
    return sharing, origin, sharing_path, tuple(path for _, path in levels)


def _fail_requests_greater_than_one(
    strategy: str, merged: dict[str, Any], origin: dict[str, PathKey], operator: OperatorConfig, report: Report
) -> bool:
    """The value of ``failRequestsGreaterThanOne`` the pool's device plugin applies.

    time-slicing: as written, false by default. mps: device plugin v0.20.0 and newer honour the value as
    written and default to true when it is unset; older device plugins force it to true, so ``true`` there
    is a no-op (accepted without a warning: it says what happens) and ``false`` is an error, since it would
    promise requests for several replicas that the plugin refuses at Allocate time. Other strategies:
    false (the field is refused by ``_check_sharing_fields``).
    """
    value = merged.get("failRequestsGreaterThanOne")
    if strategy == "time-slicing":
        return bool(value)
    if strategy != "mps":
        return False
    if operator.mps_fail_requests_configurable:
        return True if value is None else bool(value)
    if value is False:
        release = operator.release
        newer = next(
            (
                v.version
                for v in OPERATOR_VERSIONS
                if v.key > release.key and mps_fail_requests_configurable(v.device_plugin)
            ),
            None,
        )
        since = format_version(MPS_FAIL_REQUESTS_CONFIGURABLE_FROM)
        report.error(
            origin["failRequestsGreaterThanOne"],
            f"failRequestsGreaterThanOne: false cannot be honoured on MPS with device plugin {release.device_plugin} "
            f"(GPU Operator {release.version}), which always refuses requests for more than one replica",
            "remove it"
            + (
                f", or pin operator.version {newer} or newer (device plugin {since}), which honours it" if newer else ""
            ),
        )
    return True


# The device plugin's options of each strategy, which every backend reads or warns about; the backends add their own.
_DEVICE_PLUGIN_FIELDS: dict[str, frozenset[str]] = {
    "none": frozenset(),
    "time-slicing": frozenset({"replicas", "renameByDefault", "failRequestsGreaterThanOne"}),
    "mps": frozenset({"replicas", "renameByDefault", "failRequestsGreaterThanOne"}),
    "mig": frozenset({"layout", "config"}),
}
_FIELDS_BY_STRATEGY = {
    strategy: _DEVICE_PLUGIN_FIELDS.get(strategy, frozenset()) | SHARING_OPTIONS.get(strategy, frozenset())
    for strategy in (*_DEVICE_PLUGIN_FIELDS, *sorted(STRATEGIES - _DEVICE_PLUGIN_FIELDS.keys()))
}
# The strategies that share a GPU, as hints list them: the device plugin's first.
_SHARED_STRATEGIES = ", ".join(tuple(_FIELDS_BY_STRATEGY)[1:-1]) + f" or {tuple(_FIELDS_BY_STRATEGY)[-1]}"


def _check_sharing_fields(
    strategy: str, merged: dict[str, Any], origin: dict[str, PathKey], sharing_path: PathKey, report: Report
) -> None:
    allowed = _FIELDS_BY_STRATEGY[strategy]
    for alias in merged:
        if alias == "strategy" or alias in allowed:
            continue
        if strategy == "none":
            hint = f"strategy none gives whole GPUs; pick {_SHARED_STRATEGIES} to share"
        else:
            hint = f"{strategy} takes {', '.join(sorted(allowed))}; remove {alias}"
        reason = OPTION_REASONS.get((alias, strategy))
        message = f"{alias} does not apply to strategy {strategy}" + (f" ({reason})" if reason else "")
        report.error(origin[alias], message, hint, key=True)
    if strategy in ("time-slicing", "mps") and "replicas" not in merged:
        report.error(sharing_path, f"{strategy} needs replicas (how many pods share one GPU)", "add replicas: 4")
    check_sharing(strategy, merged, sharing_path, report)
    if strategy == "mig" and "layout" not in merged and "config" not in merged:
        report.error(
            sharing_path,
            "mig needs a layout (profile -> count per GPU) or a built-in config name",
            'e.g. layout: {"3g.20gb": 1, "2g.10gb": 2} or config: all-balanced',
        )


def _resolve_retired(spec: intent.Cluster, here: PathKey, operator: OperatorConfig, report: Report) -> Retired:
    """The cluster's ``retired`` entries as resolved policies (checked further in ``checks``)."""
    if spec.retired is None:
        return Retired()
    base: PathKey = (*here, "retired")
    device_plugin: list[tuple[str, Sharing]] = []
    for key, policy in (spec.retired.device_plugin_configs or {}).items():
        path: PathKey = (*base, "devicePluginConfigs", key)
        values = {alias: value for alias, name in _SHARING_ATTRIBUTES if (value := getattr(policy, name)) is not None}
        strategy = values.get("strategy")
        if strategy not in ("none", "time-slicing", "mps"):
            refusals: dict[str | None, tuple[str, str]] = {
                None: (
                    "a retired device-plugin config needs the strategy it had: none, time-slicing or mps",
                    "e.g. {strategy: time-slicing, replicas: 4}",
                ),
                "mig": ("MIG layouts are not device-plugin configs", "list the old layout under retired.migConfigs"),
            }
            refusals.update(RETIRED_REFUSALS)
            message, hint = refusals[strategy]
            report.error(path, message, hint)
            continue
        origin = {alias: (*path, alias) for alias in values}
        _check_sharing_fields(strategy, values, origin, path, report)
        device_plugin.append(
            (
                key,
                Sharing(
                    strategy=strategy,
                    replicas=int(values.get("replicas", 1)) if strategy != "none" else 1,
                    rename_by_default=bool(values.get("renameByDefault", False)),
                    fail_requests_greater_than_one=_fail_requests_greater_than_one(
                        strategy, values, origin, operator, report
                    ),
                ),
            )
        )
    mig: list[RetiredMigConfig] = []
    for index, entry in enumerate(spec.retired.mig_configs or ()):
        path = (*base, "migConfigs", index)
        gpu = get_gpu(entry.gpu)
        if gpu is None:
            close = suggest_gpus(entry.gpu)
            report.error(
                (*path, "gpu"),
                f"unknown GPU model {entry.gpu!r}",
                f"did you mean {' or '.join(repr(c) for c in close)}?" if close else "run `gpustack-gen gpus`",
            )
            continue
        if (entry.layout is None) == (entry.config is None):
            report.error(
                path, "a retired MIG config has a layout or a config, one of them", "keep the one the pool had"
            )
            continue
        sharing = Sharing(
            strategy="mig",
            mig_layout=canonical_mig_layout((entry.layout or {}).items()),
            mig_config=entry.config,
        )
        mig.append(RetiredMigConfig(gpu, sharing))
    return Retired(tuple(device_plugin), tuple(mig))
