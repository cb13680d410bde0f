"""The cluster state and the controllers that react to it, each rule citing the upstream lines it models.

Citations are ``repo@tag path:lines`` as in ``../shared/research/rollout.md`` (§ numbers refer to it).
Times are seconds; the controllers act on the clock the shell advances (``sleep``, ``kubectl wait``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from . import autoscaler, driver_upgrade, hami, helm, standalone
from .upstream import GpuFacts, chart_values

DP_LABEL = "nvidia.com/device-plugin.config"
MIG_LABEL = "nvidia.com/mig.config"
MIG_STATE_LABEL = "nvidia.com/mig.config.state"
MPS_CAPABLE_LABEL = "nvidia.com/mps.capable"
DRIVER_STATE_LABEL = "nvidia.com/gpu-driver-upgrade-state"
GPU_RESOURCE = "nvidia.com/gpu"
# The Operator's device plugin DaemonSet selects this label "true" (gpu-operator@v25.3.3
# assets/state-device-plugin/0500_daemonset.yaml:19-20); its MPS daemon needs it too (research gpu-operator.md §3.4).
DEPLOY_DP_LABEL = "nvidia.com/gpu.deploy.device-plugin"

# kubelet: a running pod's ConfigMap volume is rewritten on the pod sync loop (1 min by default) plus
# the cache delay (§7 invariant 2: "about 1-2 min"); a new pod mounts what the API server has.
VOLUME_SYNC_DELAY = 90
# mig-parted reconfigure: pause operands, wait for their pods to go, apply, restart them (§4 flow).
MIG_RECONFIG_SECONDS = 180
# The informer's event and the first steps of the reconfigure script come before the state label says
# pending: until then the node still shows its last state (§7 C5, why the state is cleared first).
MIG_REACTION_SECONDS = 5
# kubelet restart backoff of a crashed sidecar, up to about 5 min (§1, sidecar row).
SIDECAR_BACKOFF = 300
# The Operator re-renders its DaemonSets some time after ``helm upgrade`` changed the ClusterPolicy: the new
# Operator pod must be Ready and hold the leader lease (--leader-elect, gpu-operator@v25.3.3
# deployments/gpu-operator/templates/operator.yaml:41,71-74), then it walks its states in turn; until then each
# DaemonSet keeps its old template and ``rollout status`` passes on it (kubectl@v0.29.0
# pkg/polymorphichelpers/rollout_status.go:107-116). How long that takes is not measured; any delay shows it.
OPERATOR_RECONCILE_SECONDS = 30
VOLUME = "volume"  # a template's key for the device-plugin ConfigMap it mounts (beside the env it renders)
# The Operator's DaemonSets roll one node at a time (daemonsets.updateStrategy RollingUpdate, maxUnavailable "1":
# gpu-operator@v25.3.3 deployments/gpu-operator/values.yaml:45-50; v26.3.3 :47-52), each pod Ready before the
# next goes. How long a pod takes is not measured: the model gives each a time, and holds that nothing but
# ``kubectl rollout status`` shows a rollout has ended (the ClusterPolicy's ready can pass before the DaemonSet
# controller has acted: rollout.md §3, real-world.md §8).
ROLL_SECONDS_PER_NODE = 30
# The operands whose pods the model does not run one by one, and what the CDI settings render into them: the
# toolkit's and the MIG manager's CDI_ENABLED (v25.3.3 controllers/object_controls.go:1257-1258,1833-1834; v25.10.1
# :1280,1928-1929; v26.3.3 :1314,2045-2046: the MIG manager's on every runtime), the RuntimeClass of the MIG
# manager, dcgm-exporter and the validator (Cluster._runtime_class). Other changes to them are not modelled.
TIMED_DAEMONSETS = {
    "daemonset/nvidia-container-toolkit-daemonset": "toolkit",
    "daemonset/nvidia-mig-manager": "mig-manager",
    "daemonset/nvidia-dcgm-exporter": "dcgm-exporter",
    "daemonset/nvidia-operator-validator": "validator",
}
TICK = 10
# After a node upgrade that reinstalls CRI-O, a leftover oci-nvidia-hook.json from old host packages (toolkit up to
# v1.13.x, nvidia-container-toolkit@v1.10.0 oci-nvidia-hook.json, installed to /usr/share/containers/oci/hooks.d by
# packaging/rpm/SPECS/nvidia-container-toolkit.spec:51-52) runs for every container; with CDI off the Operator's
# toolkit stays in CRI-O hook mode and GPU containers fail to be created (../shared/research/real-world.md §10;
# gpu-operator.md §5 row 15: "could not load NVML library").
LEGACY_HOOK_ERROR = (
    "CreateContainerError: error executing hook /usr/bin/nvidia-container-toolkit (exit code: 1): "
    "could not load NVML library"
)


def image_version(tag: str) -> str:
    """``v0.17.4-ubi8`` -> ``v0.17.4``."""
    return tag.split("-")[0]


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.lstrip("v").split("."))


class SimulationError(AssertionError):
    """A command failed, a check did not pass, or an invariant broke: the plan is wrong."""


class Blocked(SimulationError):
    """A command's precondition failed before it acted (``test -z`` first, ``gpustack-gen blockers``): the plan
    stops there and says what to do. Right where the cluster has what it names, wrong on a plain cluster."""


@dataclass
class ConfigMapHistory:
    versions: list[tuple[float, dict[str, str]]] = field(default_factory=list)

    @property
    def current(self) -> dict[str, str]:
        return self.versions[-1][1]

    def as_of(self, time: float) -> dict[str, str] | None:
        seen = None
        for applied, data in self.versions:
            if applied <= time:
                seen = data
        return seen


@dataclass
class Operand:
    """A device-plugin, GFD or MPS-daemon pod on one node, with its config-manager (§1)."""

    running: bool = False
    started: float = 0.0
    key: str | None = None  # the config key the config-manager resolved ("" = no config file)
    config: dict[str, Any] | None = None
    error: str = ""
    retry_at: float | None = None  # a crashed sidecar retries then (kubelet backoff)
    hang: bool = False  # v0.17.4 init on an unlabelled node, blocked until the label changes


@dataclass
class WorkloadPod:
    workload: str
    requests: dict[str, int]
    selector: dict[str, str]
    node: str | None = None
    controller: bool = True  # False: a bare pod (a notebook started by hand), nothing recreates it
    empty_dir: bool = False


@dataclass
class Node:
    name: str
    pool: str
    facts: GpuFacts
    gpus: int
    labels: dict[str, str]
    unschedulable: bool = False
    mig_layout: dict[str, int] | None = None  # per GPU; None: MIG disabled
    dp: Operand = field(default_factory=Operand)
    gfd: Operand = field(default_factory=Operand)
    mps: Operand = field(default_factory=Operand)
    paused: bool = False  # operands paused by the mig-manager
    mig_request: str | None = None
    mig_done_at: float | None = None
    mig_target: dict[str, int] | None = None
    mig_started: bool = False  # the mig-manager pod runs (MIG-capable nodes, Operator installed)
    mig_pod_started: float = 0.0
    mig_react_at: float | None = None  # a label change the mig-manager has not picked up yet
    allocatable: dict[str, int] = field(default_factory=dict)
    gpu_id: str = ""  # the catalog id, for HAMi's memory registration
    hami_plugin: hami.Plugin = field(default_factory=hami.Plugin)
    nvdp: Operand = field(default_factory=Operand)  # the standalone chart's plugin pod (:mod:`.standalone`)
    registration: hami.Registration = field(default_factory=hami.Registration)
    initialized: bool = False  # it has advertised a GPU since it joined (Karpenter's Initialized, node-groups.md §1)
    create_error: str = ""  # every GPU container on the node fails to be created so (LEGACY_HOOK_ERROR)


class Cluster:
    def __init__(
        self, upstream: Path, namespace: str, kubernetes: str = "", container_runtime: str = "containerd"
    ) -> None:
        self.upstream = upstream
        self.namespace = namespace
        self.kubernetes = kubernetes  # the control plane's version
        self.container_runtime = container_runtime
        self.now = 0.0
        self.namespaces: set[str] = {"kube-system"}
        self.configmaps: dict[str, ConfigMapHistory] = {}
        self.release: helm.Release | None = None
        self.spec: dict[str, Any] | None = None  # the ClusterPolicy's spec
        self.hami: hami.Release | None = None
        self.standalone: standalone.Release | None = None
        self.hashes: dict[str, Any] = {}
        self.nodes: dict[str, Node] = {}
        self.pods: list[WorkloadPod] = []
        self.pdbs: dict[str, int] = {}
        self.driver_upgrade = driver_upgrade.Controller()
        self.autoscaler: autoscaler.Autoscaler | None = None  # cluster.yaml's autoscaler (:mod:`.extras`)
        self.empty_dir_workloads: set[str] = (
            set()
        )  # workloads whose pods mount an emptyDir (/dev/shm)  # workload -> minAvailable of its PodDisruptionBudget
        self.log: list[str] = []
        # The CDI env of the toolkit's and the device plugin's pod templates, and the next render of them,
        # pending until the Operator reconciles: (when, templates).
        self.templates: dict[str, dict[str, str]] = {}
        self.pending_templates: tuple[float, dict[str, dict[str, str]]] | None = None
        self.rolling: dict[str, float] = {}  # a TIMED_DAEMONSETS operand -> when its rollout ends
        self.tickers: list[Callable[[], None]] = []  # controllers outside the cluster, on its clock
        self.timed: dict[str, Any] = {}  # what the CDI settings rendered into each TIMED_DAEMONSETS operand
        self.unchecked: set[str] = set()  # rolled since the last rollout status that saw them end

    # --- API objects --------------------------------------------------------------------------

    def apply_configmap(self, name: str, data: dict[str, str]) -> None:
        history = self.configmaps.setdefault(name, ConfigMapHistory())
        if not history.versions or history.current != data:
            history.versions.append((self.now, dict(data)))

    def view(self, name: str, pod_started: float) -> dict[str, str] | None:
        """What a pod that started at ``pod_started`` sees of ConfigMap ``name`` now (kubelet volume sync)."""
        history = self.configmaps.get(name)
        if history is None:
            return None
        return history.as_of(max(pod_started, self.now - VOLUME_SYNC_DELAY))

    # --- the ClusterPolicy, from Helm or a patch ------------------------------------------------

    def helm_upgrade(self, version: str, files: list[dict[str, Any]], *, reuse: bool, openapi_checked: bool) -> None:
        if self.namespace not in self.namespaces:
            raise SimulationError(f'helm: namespaces "{self.namespace}" not found (no --create-namespace)')
        if self.release is not None and self.release.chart_version != version and openapi_checked:
            # values.yaml: "upgrade CRD on chart upgrade, requires --disable-openapi-validation flag".
            raise SimulationError("helm upgrade to a new chart version without --disable-openapi-validation")
        defaults = chart_values(self.upstream, version)
        self.release = helm.upgrade(self.release, version, defaults, files, reuse_values=reuse)
        self.spec = clusterpolicy_spec(self.release.values, version)
        self._changed_policy()

    def _templates(self) -> dict[str, dict[str, str]]:
        """The env the Operator writes into the templates for cdi.enabled and mig.strategy (gpu-operator
        controllers/object_controls.go): the toolkit's CDI_ENABLED (v25.3.3 :1257-1258), the device plugin's
        DEVICE_LIST_STRATEGY (the asset's ``envvar``, assets/state-device-plugin/0500_daemonset.yaml:77-78;
        v25.3.3 :1438-1440; v25.10.1 :1455-1457), MIG_STRATEGY on the device plugin (:1435) and GFD (:958)
        from applyMIGConfiguration (v25.3.3 :2466-2477)."""
        assert self.spec is not None
        cdi = bool((self.spec.get("cdi") or {}).get("enabled"))
        new_strategy = version_tuple(self.release.chart_version if self.release else "v0") >= (25, 10)
        on_strategy = "cdi-annotations,cdi-cri" if new_strategy else "envvar,cdi-annotations"
        mig = {"MIG_STRATEGY": str(self.spec["mig"]["strategy"])} if self.spec["mig"].get("strategy") else {}
        # The config's ConfigMap is mounted as a volume named after it (handleDevicePluginConfig, :3154-3164).
        name = (self.spec["devicePlugin"].get("config") or {}).get("name")
        mounted = {VOLUME: str(name)} if name else {}
        return {
            "toolkit": {"CDI_ENABLED": "true"} if cdi else {},
            "device-plugin": {"DEVICE_LIST_STRATEGY": on_strategy if cdi else "envvar", **mig, **mounted},
            "gfd": mig,
        }

    def _runtime_class(self) -> bool:
        """Whether the operands' pod templates name a RuntimeClass. Up to v25.3.x it is set on containerd only,
        whatever CDI says (v25.3.3 controllers/object_controls.go:2425-2431); from v25.10 setRuntimeClassName
        skips it on CRI-O with CDI off (v25.10.1 :2571-2577; v26.3.3 :2755-2761, also with the NRI plugin), for
        GFD, the device plugin, the MPS daemon, dcgm-exporter, DCGM, the MIG manager and the validator
        (../shared/research/real-world.md §8)."""
        assert self.spec is not None
        cdi = self.spec.get("cdi") or {}
        if version_tuple(self.spec["operator"]["version"]) < (25, 10):
            return self.container_runtime != "cri-o"
        return not (self.container_runtime == "cri-o" and not cdi.get("enabled")) and not cdi.get("nriPluginEnabled")

    def rolled_out(self, daemonset: str) -> bool:
        """``kubectl rollout status`` on a TIMED_DAEMONSETS operand: updated = available = desired, seen."""
        if self.now < self.rolling.get(daemonset, 0.0):
            return False
        self.unchecked.discard(daemonset)
        return True

    def template_stale(self, daemonset: str) -> bool:
        """``daemonset`` still has the template from before the last ClusterPolicy change."""
        pending = self.pending_templates
        return pending is not None and pending[1].get(daemonset) != self.templates.get(daemonset)

    def reconciled(self) -> bool:
        return self.pending_templates is None

    def mounted_device_plugin_config(self) -> str | None:
        """The ConfigMap the device plugin's pods mount: the template's, which names the ClusterPolicy's only once
        the Operator has reconciled it (a running pod's sidecar keeps its volume)."""
        assert self.spec is not None
        name = (self.spec["devicePlugin"].get("config") or {}).get("name")
        if self.pending_templates is None or not name:
            return name  # type: ignore[no-any-return]
        return self.templates.get("device-plugin", {}).get(VOLUME, name)

    def template_env(self, daemonset: str, name: str) -> str | None:
        return self.templates.get(daemonset, {}).get(name)

    def patch(self, patch: dict[str, Any]) -> None:
        if self.spec is None:
            raise SimulationError('clusterpolicies.nvidia.com "cluster-policy" not found')
        self.spec = merge_patch(self.spec, patch.get("spec", {}))
        self._changed_policy()

    def _changed_policy(self) -> None:
        """The first install is reconciled at once (the plan waits for it anyway); a change after
        OPERATOR_RECONCILE_SECONDS, every state in one pass (controllers/clusterpolicy_controller.go:155-179)."""
        if not self.hashes:
            self.reconcile()
            self.templates = self._templates()
        else:
            self.pending_templates = (self.now + OPERATOR_RECONCILE_SECONDS, self._templates())

    def device_plugin_enabled(self) -> bool:
        """devicePlugin.enabled false: the Operator deletes its device plugin and MPS daemon DaemonSets."""
        assert self.spec is not None
        return bool(self.spec["devicePlugin"].get("enabled", True))

    def device_plugin_selected(self, node: Node) -> bool:
        """The Operator's device plugin DaemonSet exists and selects the node (its per-node switch)."""
        return self.device_plugin_enabled() and node.labels.get(DEPLOY_DP_LABEL) == "true"

    def plugin_version(self) -> str:
        assert self.spec is not None
        return str(self.spec["devicePlugin"]["version"])

    # --- Operator reconcile (§3) ---------------------------------------------------------------

    def reconcile(self) -> None:
        """Roll each operand DaemonSet whose rendered object changed (the Operator compares a hash of it:
        gpu-operator@v25.3.3 controllers/object_controls.go:4326-4400; ConfigMap content is not part of it)."""
        assert self.spec is not None
        spec = self.spec
        config = spec["devicePlugin"].get("config") or {}
        cdi = bool((spec.get("cdi") or {}).get("enabled"))
        runtime_class = self._runtime_class()
        hashes = {
            # handleDevicePluginConfig (config name/default -> volumes, env), applyMIGConfiguration
            # (MIG_STRATEGY), transformForRuntime (CDI env): object_controls.go:2497-2612, 2466-2477.
            "device-plugin": (
                self.device_plugin_enabled(),
                spec["devicePlugin"]["version"],
                config.get("name"),
                config.get("default"),
                spec["mig"]["strategy"],
                repr(spec.get("cdi")),
            ),
            "gfd": (
                spec["devicePlugin"]["version"],
                config.get("name"),
                config.get("default"),
                spec["mig"]["strategy"],
                runtime_class,
            ),
            "mig-manager": (spec["migManager"]["version"], spec["migManager"]["config"].get("name")),
            "driver": (spec["driver"].get("enabled"), spec["driver"].get("version")),
        }
        timed = {
            "toolkit": (spec["toolkit"].get("enabled"), cdi),
            "mig-manager": (cdi, runtime_class),
            "dcgm-exporter": (runtime_class,),
            "validator": (runtime_class,),
        }
        if self.timed:
            for name, key in TIMED_DAEMONSETS.items():
                if self.timed[key] != timed[key]:
                    pods = [n for n in self.nodes.values() if key != "mig-manager" or n.facts.mig_capable]
                    self.rolling[name] = self.now + ROLL_SECONDS_PER_NODE * len(pods)
                    self.unchecked.add(name)
        self.timed = timed
        old = self.hashes
        self.hashes = hashes
        for node in self.nodes.values():
            self._operator_labels(node)
        if old.get("driver") not in (None, hashes["driver"]):
            self.driver_upgrade.required(self)
        elif old.get("driver") is None:
            for node in self.nodes.values():
                node.labels[DRIVER_STATE_LABEL] = "upgrade-done"  # the upgrade controller's steady state
                node.labels.update(self.driver_labels())
        for node in self.nodes.values():
            if old.get("device-plugin") != hashes["device-plugin"] or not node.dp.running:
                self.start_operand(node, "dp")
                self.start_operand(node, "mps")
            if old.get("gfd") != hashes["gfd"] or not node.gfd.running:
                self.start_operand(node, "gfd")
            if node.facts.mig_capable and old.get("mig-manager") != hashes["mig-manager"]:
                node.mig_started = True
                self.mig_manager_start(node)
        self.settle()

    def join(self, node: Node) -> None:
        """A node joins: the DaemonSet controller starts each operand on it (the Operator's DaemonSets
        select GPU nodes), and the Operator labels it like any other (state_manager.go)."""
        self.nodes[node.name] = node
        self.standalone_sync(node)
        if self.spec is None:
            return
        node.labels[DRIVER_STATE_LABEL] = "upgrade-done"
        node.labels.update(self.driver_labels())
        self._operator_labels(node)
        for kind in ("dp", "gfd", "mps"):
            self.start_operand(node, kind)
        if node.facts.mig_capable:
            node.mig_started = True
            self.mig_manager_start(node)
        self.hami_sync(node, restart=True)
        self.settle()

    def driver_labels(self) -> dict[str, str]:
        """What GFD reports once the driver pod runs: the ClusterPolicy's driver.version (the chart's default
        unless pinned), as the pinned GFD labels it (:mod:`.driver_upgrade`)."""
        assert self.spec is not None
        return driver_upgrade.driver_labels(str(self.spec["driver"].get("version", "")), self.spec["gfd"]["standalone"])

    def _operator_labels(self, node: Node) -> None:
        """migManager.config.default all-disabled: a MIG-capable node without the label is labelled
        all-disabled (gpu-operator@v25.3.3 controllers/state_manager.go:538-546)."""
        assert self.spec is not None
        # The Operator itself labels every node NFD shows an NVIDIA PCI device on nvidia.com/gpu.present=true
        # (controllers/state_manager.go, labelGPUNodes; line not read), whether or not GFD runs there.
        node.labels["nvidia.com/gpu.present"] = "true"
        # The state labels are added only where the key is absent: a node labelled device-plugin=false keeps the
        # Operator's plugin off (v25.3.3 controllers/state_manager.go:377-391; v26.7.0 also overwrites an empty
        # value, :470-482).
        if not node.labels.get(DEPLOY_DP_LABEL):
            node.labels[DEPLOY_DP_LABEL] = "true"
        default = self.spec["migManager"]["config"].get("default", "all-disabled")
        if node.facts.mig_capable and not node.labels.get(MIG_LABEL) and default == "all-disabled":
            self.set_labels(node, {MIG_LABEL: "all-disabled"})

    # --- config-manager, device plugin, GFD, MPS daemon (§1, §2) ---------------------------------

    def start_operand(self, node: Node, kind: str) -> None:
        """A pod (re)starts: the config-manager init container resolves its config once.

        k8s-device-plugin@v0.17.4 cmd/config-manager/main.go:334-392: a non-empty label must name an
        existing file; no label: DEFAULT_CONFIG must exist; else the operator's FALLBACK_STRATEGIES=empty
        gives no file. Any error exits 1: Init:CrashLoopBackOff, the plugin never starts. Before v0.18.2
        an unlabelled node can block forever (main.go:104-114; fixed in ab05acef5, v0.19.0, back-ported to v0.18.2).
        """
        assert self.spec is not None
        pod = getattr(node, kind)
        if kind == "mps" and pod.running and any(p.node == node.name and _uses_gpu(p.requests) for p in self.pods):
            # Stopping, the daemon sends `quit` to the MPS control daemon (k8s-device-plugin@v0.17.4
            # cmd/mps-control-daemon/main.go:115-151, mps/daemon.go:160-185): its clients lose their server.
            raise SimulationError(f"{node.name}: the MPS control daemon restarts under running MPS clients")
        pod.started = self.now
        pod.retry_at = None
        pod.hang = False
        pod.error = ""
        if node.create_error:
            pod.running, pod.config, pod.key, pod.error = False, None, None, node.create_error
            return
        if kind == "mps" and node.labels.get(MPS_CAPABLE_LABEL) != "true":
            # The MPS daemon DaemonSet selects nvidia.com/mps.capable=true
            # (gpu-operator@v25.3.3 assets/state-mps-control-daemon/0400_daemonset.yaml:19-21).
            pod.running, pod.config, pod.key = False, None, None
            return
        if node.paused or (kind in ("dp", "mps") and not self.device_plugin_selected(node)):
            pod.running = False
            return
        config = self.spec["devicePlugin"].get("config") or {}
        name = config.get("name")
        if not name:
            pod.running, pod.key, pod.config = True, "", {}
            self._after_load(node, kind)
            return
        files = self.view(name, self.now)
        if files is None:
            pod.running, pod.error = False, f"configmap {name} not found (the volume is not optional)"
            return
        label = node.labels.get(DP_LABEL, "")
        if not label and version_tuple(image_version(self.plugin_version())) < (0, 18, 2):
            pod.running, pod.hang, pod.error = False, True, "config-manager blocked on an unlabelled node"
            return
        key = label or config.get("default") or ""
        if key and key not in files:
            pod.running, pod.error = False, f"specified config {key} does not exist"
            return
        pod.running, pod.key = True, key
        pod.config = parse_config(files[key]) if key else {}
        if pod.config is None:
            pod.running, pod.error = False, f"config {key} does not parse"
            return
        self._after_load(node, kind)

    def _after_load(self, node: Node, kind: str) -> None:
        if kind == "gfd":
            self.gfd_labels(node)

    def on_device_plugin_label(self, node: Node) -> None:
        """The config-manager sidecars watch only their node's label (main.go:256-293): on a change each
        resolves the new key in its (synced) volume; found: symlink and SIGHUP, the process reloads;
        missing: the sidecar exits 1 and the main container keeps its old config (§1 sidecar row)."""
        for kind in ("dp", "gfd", "mps"):
            pod = getattr(node, kind)
            if pod.hang:
                self.start_operand(node, kind)  # the blocked Get() returns on the label change
                continue
            if pod.running and pod.key is not None and pod.key != "":
                self._sidecar(node, kind)

    def _sidecar(self, node: Node, kind: str) -> None:
        assert self.spec is not None
        pod = getattr(node, kind)
        config = self.spec["devicePlugin"].get("config") or {}
        files = self.view(self.mounted_device_plugin_config() or "", pod.started) or {}
        key = node.labels.get(DP_LABEL, "") or config.get("default") or ""
        if key and key not in files:
            pod.retry_at = self.now + SIDECAR_BACKOFF
            pod.error = f"sidecar: specified config {key} does not exist"
            return
        pod.retry_at = None
        if key == pod.key:
            return  # "Already configured. Skipping update..." (main.go:295-332): no signal
        if kind == "mps" and any(p.node == node.name and _uses_gpu(p.requests) for p in self.pods):
            # SIGHUP: the daemon quits the MPS control daemon (cmd/mps-control-daemon/main.go:115-151).
            raise SimulationError(f"{node.name}: the MPS control daemon restarts under running MPS clients")
        pod.key = key
        pod.config = parse_config(files[key]) if key else {}
        self._after_load(node, kind)

    def gfd_labels(self, node: Node) -> None:
        """GFD labels from the config it loaded (k8s-device-plugin@v0.17.4 internal/lm/resource.go,
        internal/lm/nvml.go:176-193): replicas, -SHARED when shared and not renamed, mps.capable."""
        config = node.gfd.config or {}
        sharing = config.get("sharing") or {}
        block = sharing.get("timeSlicing") or sharing.get("mps") or {}
        replicas = max((r.get("replicas", 1) for r in block.get("resources", [])), default=1)
        labels = {
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.count": str(node.gpus),
            "nvidia.com/gpu.replicas": "0" if node.mig_layout is not None else str(replicas),
            "nvidia.com/gpu.product": node.facts.product_label
            + ("-SHARED" if replicas > 1 and not block.get("renameByDefault") else ""),
            MPS_CAPABLE_LABEL: "true" if "mps" in sharing else "false",
        }
        before = node.labels.get(MPS_CAPABLE_LABEL)
        node.labels.update(labels)
        if labels[MPS_CAPABLE_LABEL] != before:
            self.start_operand(node, "mps")

    def advertised(self, node: Node) -> dict[str, int]:
        """What the node's device plugin serves (§2): nothing while it is down or paused; MIG devices
        by MIG_STRATEGY (env over file: api/config/v1/config.go:41-55); shared GPUs x replicas, renamed
        to .shared by renameByDefault (api/config/v1/replicas.go:206-210). MPS needs its daemon
        (internal/plugin/server.go:126-131). Under single, mixed MIG profiles fail NewDeviceMap and the
        plugin exits (internal/rm/device_map.go:88-100, FAIL_ON_INIT_ERROR)."""
        if node.nvdp.running:
            return _shared(node.nvdp.config, node.gpus)
        if self.spec is None or not node.dp.running or node.paused:
            return {}
        strategy = self.spec["mig"]["strategy"]
        if node.mig_layout is not None:
            if strategy == "single":
                if len(node.mig_layout) != 1:
                    return {}
                return {GPU_RESOURCE: sum(node.mig_layout.values()) * node.gpus}
            return {node.facts.profiles[p]: n * node.gpus for p, n in node.mig_layout.items()}
        sharing = (node.dp.config or {}).get("sharing") or {}
        if "mps" in sharing and not (node.mps.running and "mps" in ((node.mps.config or {}).get("sharing") or {})):
            return {}
        return _shared(node.dp.config, node.gpus)

    def refresh_allocatable(self, node: Node) -> None:
        """kubelet: a resource whose plugin is gone stays in capacity with allocatable 0 (PluginDisconnected).

        Both plugins advertise nvidia.com/gpu and must not run on a node together (HAMi web
        docs/troubleshooting/troubleshooting.md): a node where both run is a failed rollout."""
        served = self.advertised(node)
        if node.nvdp.running and node.dp.running:
            # Both serve nvidia-gpu.sock: the later one deletes the other's socket, and whichever stops removes the
            # path the other serves, leaving the node at 0 (k8s-device-plugin@v0.17.4 internal/plugin/server.go:100-104,
            # 163-179; research standalone-plugin.md §5).
            raise SimulationError(
                f"{node.name} runs two device plugins that register nvidia.com/gpu: the standalone chart's "
                f"({self.standalone.daemonset if self.standalone else 'its pod'}) and the GPU Operator's"
            )
        node.registration = hami.registration(node.hami_plugin, node.gpu_id, node.gpus, node.mig_layout is not None)
        if node.registration.gpus:
            if node.dp.running:
                raise SimulationError(
                    f"{node.name} runs both the GPU Operator's device plugin and HAMi's: both advertise nvidia.com/gpu"
                )
            served = {hami.GPU: node.registration.totals()[hami.GPU]}
        node.allocatable = {**{name: 0 for name in node.allocatable}, **served}
        node.initialized = node.initialized or any(count > 0 for count in served.values())

    def served(self, node: Node) -> dict[str, int]:
        """What a node offers: its allocatable, and HAMi's memory and cores from its node annotation."""
        return {**{k: v for k, v in node.allocatable.items() if v > 0}, **node.registration.totals()}

    # --- the standalone device plugin chart (sim/standalone.py) --------------------------------

    def standalone_upgrade(
        self, name: str, namespace: str, version: str, files: list[dict[str, Any]], *, reuse: bool
    ) -> None:
        """``helm upgrade --install`` of the standalone chart: its ConfigMap first, then the DaemonSet's pods."""
        before = self.standalone.template() if self.standalone is not None else None
        release = standalone.upgrade(self.upstream, self.standalone, name, namespace, version, files, reuse=reuse)
        if self.standalone is not None and self.standalone.name != name:
            raise SimulationError(f"a second standalone device plugin release {name} beside {self.standalone.name}")
        data = standalone.configmap_data(release)
        if data is not None:
            self.apply_configmap(release.configmap(), data)
        self.standalone = release
        rolls = before != release.template() and not release.on_delete
        for node in self.nodes.values():
            self.standalone_sync(node, restart=rolls)
        self.settle()

    def standalone_uninstall(self) -> None:
        self.standalone = None
        for node in self.nodes.values():
            node.nvdp = Operand()
        self.settle()

    def standalone_sync(self, node: Node, *, restart: bool = False, label_changed: bool = False) -> None:
        """The DaemonSet controller: the pod runs where the template's nodeSelector and affinity match; a new pod's
        init config-manager resolves its key once, the sidecar again on a label change."""
        release = self.standalone
        if release is None or not release.schedules_on(node.labels):
            node.nvdp = Operand()
            return
        if node.nvdp.running and not restart:
            if label_changed and release.configmap():
                self._standalone_sidecar(node, release)
            return
        if node.nvdp.hang or (node.nvdp.error and not restart and not label_changed):
            return
        pod = Operand(started=self.now)
        node.nvdp = pod
        if node.create_error and (release.values.get("deviceListStrategy") or "envvar") == "envvar":
            pod.error = node.create_error  # the hosts' hook hands it the GPUs, and fails (upgrade_kubernetes)
            return
        name = release.configmap()
        if not name:
            pod.running, pod.key, pod.config = True, "", {}
            return
        files = self.view(name, self.now)
        if files is None:
            pod.error = f"configmap {name} not found (the volume is not optional)"
            return
        key, error = release.resolve(node.labels.get(DP_LABEL, ""), files)
        if key is None:
            pod.error = error
            return
        pod.config = parse_config(files[key]) if key else {}
        if pod.config is None:
            pod.error = f"config {key} does not parse"
            return
        pod.running, pod.key = True, key

    def _standalone_sidecar(self, node: Node, release: standalone.Release) -> None:
        pod = node.nvdp
        files = self.view(release.configmap(), pod.started) or {}
        key, error = release.resolve(node.labels.get(DP_LABEL, ""), files)
        if key is None:
            pod.error = f"sidecar: {error}"  # it exits; the plugin keeps serving its old config
            return
        if key != pod.key:
            pod.key, pod.config = key, parse_config(files[key]) if key else {}

    # --- the Kubernetes upgrade, done outside the plan ----------------------------------------------

    def upgrade_kubernetes(self, version: str) -> None:
        """The control plane, then each node: the node upgrade drains it and reinstalls its kubelet and runtime
        (research real-world.md §10; gpu-operator.md §5 row 15, CRI-O + K8s 1.28), so its pods start again. On
        CRI-O with CDI off (or the standalone chart's envvar devices, standalone-plugin.md §8) the GPU containers
        then meet the legacy OCI hook (LEGACY_HOOK_ERROR); with CDI on the
        toolkit configures a runtime handler instead (CRIO_CONFIG_MODE=config, gpu-operator@v25.3.3
        controllers/object_controls.go:1260; nvidia-container-toolkit@v1.17.8 tools/container/runtime/crio/
        crio.go:93-99). Nothing re-renders a Helm release: HAMi's scheduler keeps its tag (sim/hami.py)."""
        self.kubernetes = version
        cdi = bool(((self.spec or {}).get("cdi") or {}).get("enabled"))
        for node in self.nodes.values():
            for pod in self.pods:
                if pod.node == node.name:
                    pod.node = None  # evicted by the drain; its controller recreates it
            if self.container_runtime == "cri-o" and (self.standalone is not None or self.spec is not None) and not cdi:
                node.create_error = LEGACY_HOOK_ERROR  # the standalone chart's hosts run the hook too (envvar)
            if self.spec is not None:
                for kind in ("dp", "gfd", "mps"):
                    self.start_operand(node, kind)
            self.standalone_sync(node, restart=True)
            self.hami_sync(node, restart=True)
        self.pods = [pod for pod in self.pods if pod.node is not None or pod.controller]
        self.settle()

    # --- HAMi (sim/hami.py) ---------------------------------------------------------------------

    def hami_upgrade(self, upstream_version: str, namespace: str, files: list[dict[str, Any]]) -> None:
        """helm upgrade --install of the HAMi chart: the device plugin rolls when the device config changes
        (its checksum annotation), not when only the per-node config does."""
        before = self.hami.device_config() if self.hami is not None else None
        self.hami = hami.upgrade(self.upstream, upstream_version, namespace, files, self.kubernetes)
        for node in self.nodes.values():
            self.hami_sync(node, restart=before != self.hami.device_config())
        self.settle()

    def hami_uninstall(self) -> None:
        self.hami = None
        for node in self.nodes.values():
            node.hami_plugin = hami.Plugin()
        self.settle()

    def hami_restart(self) -> None:
        for node in self.nodes.values():
            self.hami_sync(node, restart=True)

    def hami_sync(self, node: Node, *, restart: bool = False) -> None:
        """The DaemonSet controller: HAMi's plugin runs exactly on the nodes its selector matches."""
        if self.hami is None or any(node.labels.get(k) != v for k, v in self.hami.selector.items()):
            node.hami_plugin = hami.Plugin()
            return
        if node.hami_plugin.running and not restart:
            return
        node.hami_plugin = hami.start(self.hami, node.name, self._needs_runtime_class())

    def _needs_runtime_class(self) -> bool:
        """GPU Operator v25.10+ with CDI: nvidia is no longer the default runtime."""
        if self.spec is None:
            return False
        cdi = self.spec.get("cdi") or {}
        return version_tuple(self.spec["operator"]["version"]) >= (25, 10, 0) and bool(cdi.get("enabled"))

    def hami_rolled_out(self) -> bool:
        if self.hami is None:
            return False
        wanted = [n for n in self.nodes.values() if all(n.labels.get(k) == v for k, v in self.hami.selector.items())]
        return all(node.hami_plugin.running for node in wanted)

    # --- mig-manager (§4) -----------------------------------------------------------------------

    def mig_manager_start(self, node: Node) -> None:
        """At start the informer's Add replays the current label (mig-parted@v0.12.3 main.go:406-435)."""
        node.mig_done_at = None
        node.mig_pod_started = self.now
        value = node.labels.get(MIG_LABEL)
        if value:
            self.mig_reconfigure(node, value)

    def on_mig_label(self, node: Node) -> None:
        """Update fires only when the value changes; empty values do not wake the loop (main.go:96-113)."""
        if node.mig_started and node.labels.get(MIG_LABEL):
            node.mig_react_at = self.now + MIG_REACTION_SECONDS

    def mig_reconfigure(self, node: Node, name: str) -> None:
        """reconfigure-mig.sh (v0.12.3) / reconfigure.go (v0.15.0): a config missing from the mounted file
        fails before anything is touched (:438-443); an applied one is success (:453-457); otherwise
        pending, operands paused (:493-504), apply after their pods go, success or failed (:583-587)."""
        assert self.spec is not None
        configs = self.mig_configs(node)
        if configs is None or name not in configs:
            self._mig_state(node, "failed")
            return
        target = _mig_target(configs[name], node)
        if target == "no match":
            self._mig_state(node, "failed")
            return
        assert not isinstance(target, str)
        if target == node.mig_layout:
            self._mig_state(node, "success")
            return
        if any(p.node == node.name and _uses_gpu(p.requests) for p in self.pods):
            # The manager neither cordons nor drains; NVML refuses to destroy a MIG device or reset a GPU a
            # process holds, so the apply fails (rollout notes §4: the caller must drain first).
            self._mig_state(node, "failed")
            return
        self._mig_state(node, "pending")
        node.paused = True
        node.mig_target = target
        node.mig_done_at = self.now + MIG_RECONFIG_SECONDS
        for kind in ("dp", "gfd", "mps"):
            getattr(node, kind).running = False

    def mig_configs(self, node: Node) -> dict[str, Any] | None:
        assert self.spec is not None
        name = self.spec["migManager"]["config"].get("name") or "default-mig-parted-config"
        if name == "default-mig-parted-config":
            return {"all-disabled": [{"devices": "all", "mig-enabled": False}]}
        files = self.view(name, node.mig_pod_started)
        if files is None or "config.yaml" not in files:
            return None
        parsed = YAML(typ="safe", pure=True).load(files["config.yaml"])
        configs: dict[str, Any] = parsed["mig-configs"]
        return configs

    def _mig_finish(self, node: Node) -> None:
        busy = any(pod.node == node.name and _uses_gpu(pod.requests) for pod in self.pods)
        node.mig_done_at = None
        node.paused = False
        if busy:
            # NVML refuses to destroy instances in use (§4: "the caller must drain first").
            self._mig_state(node, "failed")
        else:
            node.mig_layout = node.mig_target
            self._mig_state(node, "success")
        for kind in ("dp", "gfd", "mps"):
            self.start_operand(node, kind)

    def _mig_state(self, node: Node, state: str) -> None:
        node.labels[MIG_STATE_LABEL] = state

    # --- nodes and pods -------------------------------------------------------------------------

    def set_labels(self, node: Node, changes: dict[str, str | None]) -> None:
        before = dict(node.labels)
        for key, value in changes.items():
            if value is None:
                node.labels.pop(key, None)
            else:
                node.labels[key] = value
        if before.get(DP_LABEL) != node.labels.get(DP_LABEL) and self.spec is not None:
            self.on_device_plugin_label(node)
        if before.get(MIG_LABEL) != node.labels.get(MIG_LABEL) and self.spec is not None:
            self.on_mig_label(node)
        if before.get(DEPLOY_DP_LABEL) != node.labels.get(DEPLOY_DP_LABEL) and self.spec is not None:
            # The DaemonSet controller starts (or deletes) the Operator's plugin and MPS daemon pods on the node.
            selected = self.device_plugin_selected(node)
            for kind in ("dp", "mps"):
                if getattr(node, kind).running != selected:
                    self.start_operand(node, kind)
        self.hami_sync(node)
        self.standalone_sync(node, label_changed=before.get(DP_LABEL) != node.labels.get(DP_LABEL))

    def pods_on(self, node: str) -> list[WorkloadPod]:
        return [pod for pod in self.pods if pod.node == node]

    def evict(self, node: Node) -> None:
        for pod in self.pods:
            if pod.node == node.name:
                pod.node = None

    def schedule(self) -> None:
        for pod in self.pods:
            if pod.node is not None:
                continue
            for node in self.nodes.values():
                if node.unschedulable or any(node.labels.get(k) != v for k, v in pod.selector.items()):
                    continue
                if node.registration.gpus:
                    placed = [p.requests for p in self.pods if p.node == node.name]
                    if hami.fits(node.registration, placed, pod.requests):
                        pod.node = node.name
                        break
                    continue
                used = _used(self.pods, node.name)
                if all(used.get(r, 0) + n <= node.allocatable.get(r, 0) for r, n in pod.requests.items()):
                    pod.node = node.name
                    break

    def settle(self) -> None:
        for ticker in self.tickers:
            ticker()
        if self.pending_templates is not None and self.now >= self.pending_templates[0]:
            # The Operator re-renders the DaemonSets now: the operands roll from here.
            self.templates = self.pending_templates[1]
            self.pending_templates = None
            self.reconcile()
        self.driver_upgrade.step(self)
        for node in self.nodes.values():
            if node.mig_react_at is not None and self.now >= node.mig_react_at:
                node.mig_react_at = None
                value = node.labels.get(MIG_LABEL)
                if value:
                    self.mig_reconfigure(node, value)
            if node.mig_done_at is not None and self.now >= node.mig_done_at:
                self._mig_finish(node)
            for kind in ("dp", "gfd", "mps"):
                pod = getattr(node, kind)
                if pod.retry_at is not None and self.now >= pod.retry_at:
                    self._sidecar(node, kind)
            if self.spec is not None or self.standalone is not None or node.nvdp.running:
                self.refresh_allocatable(node)
        self.schedule()
        if self.autoscaler is not None:
            self.autoscaler.step(self)

    def advance(self, seconds: float) -> None:
        end = self.now + seconds
        while self.now < end:
            self.now = min(end, self.now + TICK)
            self.settle()


def merge_patch(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """RFC 7386 JSON merge patch: null deletes, objects merge, anything else replaces; Helm's coalesce."""
    return helm.coalesce(patch, target)


def clusterpolicy_spec(values: dict[str, Any], version: str) -> dict[str, Any]:
    """The fields of templates/clusterpolicy.yaml the model needs. devicePlugin.config is rendered only
    when its name is set (gpu-operator@v25.3.3 templates/clusterpolicy.yaml:454-458); an empty
    migManager.config.name means the default ConfigMap up to v25.x (CRD default) and dynamic generation
    from v26.3 (object_controls.go:2069-2092), which the model reads as the default ConfigMap."""
    plugin_config = values["devicePlugin"].get("config") or {}
    mig_config = values["migManager"].get("config") or {}
    spec: dict[str, Any] = {
        "operator": {"version": version},
        "cdi": dict(values.get("cdi") or {}),
        "driver": {
            "enabled": values["driver"].get("enabled", True),
            "version": values["driver"].get("version"),
            "upgradePolicy": _policy_spec(values["driver"].get("upgradePolicy") or {}),
        },
        # v23.9.2 ships GFD as its own image (values.yaml:323-327); later charts run the device plugin's.
        "gfd": {"standalone": values["gfd"].get("image") == "gpu-feature-discovery"},
        "toolkit": {"enabled": values["toolkit"].get("enabled", True)},
        "mig": {"strategy": values["mig"]["strategy"]},
        "devicePlugin": {
            "version": image_version(values["devicePlugin"]["version"]),
            "enabled": values["devicePlugin"].get("enabled", True),
        },
        "migManager": {
            "version": image_version(values["migManager"]["version"]),
            "config": {"name": mig_config.get("name") or "", "default": mig_config.get("default", "all-disabled")},
        },
    }
    if plugin_config.get("name"):
        spec["devicePlugin"]["config"] = {"name": plugin_config["name"], "default": plugin_config.get("default", "")}
    return spec


def _policy_spec(policy: dict[str, Any]) -> dict[str, Any]:
    """templates/clusterpolicy.yaml renders the chart's driver.upgradePolicy.gpuPodDeletion as podDeletion."""
    return {("podDeletion" if key == "gpuPodDeletion" else key): value for key, value in policy.items()}


def parse_config(text: str) -> dict[str, Any] | None:
    """A device-plugin config file; anything but ``version: v1`` fails to load (api/config/v1/config.go:120-144)."""
    data = YAML(typ="safe", pure=True).load(text)
    if not isinstance(data, dict) or data.get("version") != "v1":
        return None
    return data


def _mig_target(entries: list[dict[str, Any]], node: Node) -> dict[str, int] | str | None:
    for entry in entries:
        ids = [str(i).upper() for i in entry.get("device-filter", [])]
        if ids and node.facts.pci_device_id.upper() not in ids:
            continue
        if not entry.get("mig-enabled"):
            return None
        return {str(k): int(v) for k, v in entry["mig-devices"].items()}
    return "no match"


def _shared(config: dict[str, Any] | None, gpus: int) -> dict[str, int]:
    """Shared GPUs x replicas, renamed to .shared by renameByDefault (api/config/v1/replicas.go:206-210)."""
    sharing = (config or {}).get("sharing") or {}
    block = sharing.get("timeSlicing") or sharing.get("mps")
    if not block:
        return {GPU_RESOURCE: gpus}
    replicas = block["resources"][0]["replicas"]
    name = GPU_RESOURCE + (".shared" if block.get("renameByDefault") else "")
    return {name: replicas * gpus}


def _uses_gpu(requests: dict[str, int]) -> bool:
    return any(name.startswith("nvidia.com/") for name in requests)


def _used(pods: list[WorkloadPod], node: str) -> dict[str, int]:
    used: dict[str, int] = {}
    for pod in pods:
        if pod.node == node:
            for name, count in pod.requests.items():
                used[name] = used.get(name, 0) + count
    return used
