"""The fleet intent file as typed models: the public contract of ``fleet.yaml``.

Validation is strict: no value is coerced (``"4"`` is not an integer, ``yes`` is not a boolean), and
unknown keys are refused. Cross-field rules (sharing resolution, MIG geometry, capacity) live in
``checks``; these models only say what each field may hold.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field
from pydantic_core import PydanticCustomError

from .backends import BACKEND_NAMES, SEMANTICS, STRATEGY_NAMES, STRATEGY_SUMMARIES, listing
from .backends.device_plugin import DevicePluginSettings
from .backends.dra import DraSettings
from .backends.hami import HamiSettings
from .intent_base import DnsLabel
from .intent_base import IntentModel as _Model
from .names import (
    CONFIGMAP_KEY,
    DNS1123_LABEL,
    DNS1123_SUBDOMAIN,
    DRIVER_VERSION,
    KUBERNETES_VERSION,
    LABEL_VALUE,
    MAX_QUANTITY_EXPONENT,
    MAX_QUANTITY_LENGTH,
    QUANTITY,
    explain_label_key,
    explain_label_value,
)

API_VERSION = "gpustack-gen/v1alpha1"


def _node_selector(value: dict[str, str]) -> dict[str, str]:
    for key, label_value in value.items():
        problem = explain_label_key(key) or explain_label_value(label_value)
        if problem:
            raise PydanticCustomError(
                "label",
                "{problem}",
                {"problem": problem, "hint": "e.g. node.kubernetes.io/instance-type: gpu-t4", "key": key},
            )
    return value


def _taint_key(value: str) -> str:
    problem = explain_label_key(value)
    if problem:
        raise PydanticCustomError(
            "label", "{problem}", {"problem": f"taint key: {problem}", "hint": "e.g. nvidia.com/gpu or dedicated"}
        )
    return value


def _taint_value(value: str) -> str:
    problem = explain_label_value(value)
    if problem:
        raise PydanticCustomError(
            "label",
            "{problem}",
            {
                "problem": f"taint value: {problem}",
                "hint": "e.g. gpu; without a value the toleration uses operator Exists",
            },
        )
    return value


_DRIVER_VERSION_RE = re.compile(DRIVER_VERSION)


def _driver_version(value: str) -> str:
    if len(value) <= 64 and _DRIVER_VERSION_RE.fullmatch(value):
        return value
    found = re.search(DRIVER_VERSION.strip("^$"), value)
    example = found.group(0) if found and len(found.group(0)) <= 64 else "580.82.07"
    raise PydanticCustomError(
        "value",
        "{problem}",
        {
            "problem": f"{value!r} is not a driver version",
            "hint": f'write the version alone, quoted, without a v prefix or an OS suffix: "{example}"',
        },
    )


NodeSelector = Annotated[dict[str, str], AfterValidator(_node_selector)]


def _kube_context(value: str) -> str:
    # A kubeconfig context name is free text (client-go checks only that it is in the file); the one rule is that
    # it fits on one printed line.
    if value and value.isprintable():
        return value
    raise PydanticCustomError(
        "value",
        "{problem}",
        {
            "problem": f"{value!r} is not a kube context name",
            "hint": "the context's name as kubectl config get-contexts lists it, on one line",
        },
    )


KubeContext = Annotated[
    str, AfterValidator(_kube_context), Field(json_schema_extra={"minLength": 1, "pattern": "^[^\\x00-\\x1f\\x7f]+$"})
]
TaintKey = Annotated[str, AfterValidator(_taint_key), Field(json_schema_extra={"minLength": 1, "maxLength": 317})]
TaintValue = Annotated[
    str, AfterValidator(_taint_value), Field(json_schema_extra={"pattern": LABEL_VALUE, "maxLength": 63})
]
DriverVersion = Annotated[
    str, AfterValidator(_driver_version), Field(json_schema_extra={"pattern": DRIVER_VERSION, "maxLength": 64})
]
_QUANTITY_RE = re.compile(QUANTITY)
_QUANTITY_HINT = 'a Kubernetes quantity: an integer, or a quoted string such as "300m", "1.5" or "4Gi"'


def _quantity_type(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        shown = str(value).lower() if isinstance(value, bool) else repr(value)
        quoted = f'quote it: "{value}"' if isinstance(value, float) else _QUANTITY_HINT
        raise PydanticCustomError(
            "quantity", "{problem}", {"problem": f"expected a Kubernetes quantity, got {shown}", "hint": quoted}
        )
    return value


def _exponent(quantity: str) -> int:
    """The exponent of a quantity such as ``"1e3"`` (0 without one; ``"1E"`` is exa and ``"1Ei"`` exbi, not exponents)."""
    match = _QUANTITY_RE.fullmatch(quantity)
    suffix = (match.group(3) if match else None) or ""
    return int(suffix[1:]) if suffix[:1] in ("e", "E") and suffix[1:] not in ("", "i") else 0


def _quantity_syntax(value: int | str) -> int | str:
    if isinstance(value, int) and value < 0:
        problem = f"a resource request cannot be negative, got {value}"
    elif isinstance(value, int) and value.bit_length() > 256:
        problem = "the number is far larger than any resource"
    elif isinstance(value, str) and len(value) > MAX_QUANTITY_LENGTH:
        problem = (
            f"a quantity of {len(value)} characters is far larger than any resource (at most {MAX_QUANTITY_LENGTH})"
        )
    elif isinstance(value, str) and not _QUANTITY_RE.fullmatch(value):
        problem = f"{value!r} is not a Kubernetes quantity"
    elif isinstance(value, str) and abs(_exponent(value)) > MAX_QUANTITY_EXPONENT:
        problem = f"{value!r}: an exponent beyond {MAX_QUANTITY_EXPONENT} is far from any resource size"
    else:
        return value
    hint = "use m for millicores (300m) and Ki, Mi, Gi for bytes (4Gi)"
    if isinstance(value, str) and value.upper().endswith(("KB", "MB", "GB", "TB")):
        hint = f"Kubernetes writes gigabytes as G and gibibytes as Gi: {value[:-1]} or {value[:-2]}{value[-2]}i"
    raise PydanticCustomError("quantity", "{problem}", {"problem": problem, "hint": hint})


Quantity = Annotated[
    int | str,
    BeforeValidator(_quantity_type),
    AfterValidator(_quantity_syntax),
    Field(json_schema_extra={"pattern": QUANTITY}),
]
# The names the fleet file may give come from the model's registry: a backend registered there is one here.
if TYPE_CHECKING:
    StrategyName = str
    BackendName = str
else:
    StrategyName = Literal[STRATEGY_NAMES]
    BackendName = Literal[BACKEND_NAMES]
_DEVICE_PLUGIN_STRATEGIES = (
    "none (whole GPUs), time-slicing or mps (several pods per GPU, no memory isolation), mig (hardware partitions)"
)


class CdiSettings(_Model):
    """Container Device Interface settings of the GPU Operator (`cdi.*` in the chart values)."""

    enabled: bool | None = Field(
        default=None,
        description="Use CDI to inject GPUs into containers. Default: the Operator version's default (on from v25.10.0).",
    )
    default: bool | None = Field(
        default=None,
        description="Make CDI the default runtime mode (v23.3.0 to v25.3.x; a no-op from v25.10.0, where CDI is the default).",
    )
    nri_plugin_enabled: bool | None = Field(
        default=None,
        description="Inject devices through the NRI plugin instead of a runtime class (v26.3.0 and newer; needs CDI and the toolkit).",
    )


class ComponentSettings(_Model):
    """An Operator component that can be turned off where the nodes already provide it."""

    enabled: bool | None = Field(default=None, description="Deploy this component (default true).")


class DriverUpgradePolicy(_Model):
    """How the Operator's driver upgrade controller rolls a new driver (`driver.upgradePolicy`); see
    docs/guides/rollout-assumptions.md for why the defaults differ from the chart's."""

    max_parallel_upgrades: int = Field(
        default=1,
        ge=0,
        le=100_000,
        description="Nodes upgraded at once (0: all at once). Default 1, as the chart: a node's GPU pods stop while its driver reloads.",
    )
    delete_empty_dir: bool = Field(
        default=True,
        description="Let the controller delete GPU pods with an emptyDir volume (/dev/shm is common). Default true; the chart's false fails the node (upgrade-failed) on the first such pod and stalls the upgrade.",
    )
    force: bool = Field(
        default=False,
        description="Let the controller delete GPU pods without a controller (they are not recreated). Default false: such a pod fails its node (upgrade-failed).",
    )


class DriverSettings(ComponentSettings):
    """The NVIDIA driver DaemonSet (`driver.*`)."""

    upgrade_policy: DriverUpgradePolicy | None = Field(
        default=None, description="How a new driver is rolled out node by node (driver.upgradePolicy)."
    )

    version: DriverVersion | None = Field(
        default=None,
        description='Driver version to deploy, quoted, e.g. "580.82.07". Default: the one the chart version ships; unused when enabled is false.',
    )


class AdoptFrom(_Model):
    """The ConfigMaps a running Operator reads before gpustack-gen takes it over (`import` writes this)."""

    device_plugin_config: DnsLabel | None = Field(
        default=None, description="The ConfigMap the ClusterPolicy's devicePlugin.config.name names today."
    )
    mig_config: DnsLabel | None = Field(
        default=None,
        description="The custom mig-parted ConfigMap the ClusterPolicy's migManager.config.name names today.",
    )


class OperatorSettings(_Model):
    """GPU Operator chart settings."""

    version: str | None = Field(
        default=None,
        description="GPU Operator chart version, e.g. v25.3.3 (see `gpustack-gen versions`). Default: the newest known.",
    )
    namespace: DnsLabel | None = Field(
        default=None, description="Namespace of the Operator and of its ConfigMaps (default gpu-operator)."
    )
    cdi: CdiSettings | None = Field(default=None, description="Container Device Interface settings.")
    driver: DriverSettings | None = Field(default=None, description="The driver DaemonSet.")
    toolkit: ComponentSettings | None = Field(default=None, description="The NVIDIA Container Toolkit DaemonSet.")
    install: Literal["helm", "external"] | None = Field(
        default=None,
        description="How the Operator is installed: helm (default; `plan` prints helm upgrade) or external (installed by something else, such as OLM or a platform add-on; `plan` patches its ClusterPolicy).",
    )
    values_files: list[Annotated[str, Field(min_length=1)]] | None = Field(
        default=None,
        description="Your own values files for the gpu-operator release, relative to the fleet file; printed helm commands pass them before gpustack-gen's values (never --reuse-values).",
    )
    adopt_from: AdoptFrom | None = Field(
        default=None,
        description="The Operator already runs with these ConfigMaps: the plan switches the ClusterPolicy to gpustack-gen's before it labels any node. Delete it after the first rollout.",
    )


class SharingPolicy(_Model):
    """How the GPUs of a pool are shared. Partial entries merge over less specific ones."""

    strategy: StrategyName | None = Field(
        default=None,
        description=", ".join((_DEVICE_PLUGIN_STRATEGIES, *STRATEGY_SUMMARIES.values())) + ".",
    )
    replicas: int | None = Field(
        default=None,
        ge=2,
        description="time-slicing and mps: how many pods may share one GPU (an integer of at least 2).",
    )
    rename_by_default: bool | None = Field(
        default=None, description="time-slicing and mps: advertise `nvidia.com/gpu.shared` instead of `nvidia.com/gpu`."
    )
    fail_requests_greater_than_one: bool | None = Field(
        default=None,
        description="Refuse containers that ask for more than one shared GPU. time-slicing: default false. mps: default true; false needs GPU Operator v26.7.0 or newer (device plugin v0.20.0), older ones always refuse.",
    )
    layout: dict[str, Annotated[int, Field(ge=1)]] | None = Field(
        default=None,
        min_length=1,
        description='mig: MIG profile -> instances per GPU, e.g. {"3g.20gb": 1, "2g.10gb": 2}.',
    )
    config: str | None = Field(
        default=None,
        min_length=1,
        description="mig: a built-in mig-parted config of the Operator, e.g. all-balanced or all-1g.10gb.",
    )
    split: int | None = Field(
        default=None,
        ge=1,
        le=128,
        description="hami: vGPUs per physical GPU, how many pods may share one GPU (HAMi's deviceSplitCount).",
    )
    memory_scaling: float | None = Field(
        default=None,
        gt=0,
        le=100,
        description="hami: GPU memory HAMi hands out per GPU, as a multiple of the real memory (deviceMemoryScaling, default 1). Above 1 overcommits memory, which upstream calls experimental.",
    )
    policy: Literal["binpack", "spread"] | None = Field(
        default=None,
        description="hami: binpack (fill a node, and each GPU, before the next) or spread (the opposite); HAMi's scheduler policy, one setting per cluster. Default: HAMi's (nodes binpack, GPUs spread).",
    )
    interval: str | None = Field(
        default=None,
        description="time-slicing on backend dra: the time slice of the GPUs (the driver's timeSlicingConfig.interval): Default, Short, Medium or Long (default Default).",
        json_schema_extra={"enum": ["Default", "Short", "Medium", "Long"]},
    )
    active_thread_percentage: int | None = Field(
        default=None,
        description="mps on backend dra: the share of the GPU's threads each MPS client may use, 0 to 100 (the driver's mpsConfig.defaultActiveThreadPercentage; default 100 / replicas).",
    )
    pinned_memory_limit: Quantity | None = Field(
        default=None,
        description='mps on backend dra: the device memory each MPS client may pin, e.g. "10Gi" (the driver\'s mpsConfig.defaultPinnedDeviceMemoryLimit; default no limit).',
    )


class MigSettings(_Model):
    """How MIG devices are advertised to Kubernetes."""

    strategy: Literal["single", "mixed"] | None = Field(
        default=None,
        description="single (every MIG device is `nvidia.com/gpu`; one profile type per node) or mixed (`nvidia.com/mig-<profile>`).",
    )


class Taint(_Model):
    """A taint the pool's nodes carry; workloads on the pool get the matching toleration."""

    key: TaintKey = Field(description="Taint key, a label key, e.g. nvidia.com/gpu.")
    value: TaintValue | None = Field(
        default=None, description="Taint value; without one the toleration uses operator Exists."
    )
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = Field(
        default="NoSchedule", description="Taint effect."
    )


class DrainPolicy(_Model):
    """How ``plan`` drains the pool's nodes when a change stops the GPU pods on them (docs/guides/rollout-assumptions.md)."""

    max_unavailable: int = Field(
        default=1,
        ge=1,
        le=100_000,
        description="Nodes drained at once: each batch is drained, changed and uncordoned before the next, so its pods find room on the rest of the pool.",
    )
    timeout_minutes: int = Field(
        default=15,
        ge=1,
        le=1440,
        description="Per batch, how long `kubectl drain --timeout` waits for its evictions (a PodDisruptionBudget refusal is retried until then).",
    )
    delete_pods_without_controller: bool = Field(
        default=False,
        description="Drain with --force: pods without a controller (bare notebook pods) are deleted and not recreated. Without it the plan's pre-flight stops on them.",
    )


class NodePool(_Model):
    """A group of identical GPU nodes."""

    name: DnsLabel = Field(description="Pool name, unique in the cluster.")
    gpu: str = Field(
        min_length=1,
        description="GPU model: a catalog id (tesla-t4, a100-40gb, h100-80gb...) or an nvidia.com/gpu.product label value.",
    )
    nodes: int = Field(ge=0, le=100_000, description="Number of nodes (0 for a pool that scales from zero).")
    gpus_per_node: int = Field(default=1, ge=1, le=64, description="Physical GPUs per node.")
    node_selector: NodeSelector = Field(
        min_length=1,
        description="Labels that select the pool's nodes; workloads on the pool get the same nodeSelector.",
    )
    taints: list[Taint] = Field(default_factory=list, description="Taints of the pool's nodes.")
    sharing: SharingPolicy | None = Field(
        default=None,
        description="The pool's sharing policy; overrides the cluster and fleet policies for its GPU model.",
    )
    drain: DrainPolicy | None = Field(
        default=None, description="How the plan drains the pool (default: one node at a time, 15 minutes per batch)."
    )
    node_names: list[Annotated[str, Field(max_length=253, pattern=DNS1123_SUBDOMAIN)]] | None = Field(
        default=None,
        min_length=1,
        description="Backend hami: the names of the pool's nodes, one per node. HAMi matches per-node settings by node name only, so a pool whose split or memoryScaling differs from the cluster's other pools needs them.",
    )


class WorkloadRelease(_Model):
    """The Helm release that deploys a workload, so that `plan` can print the command that redeploys it."""

    release: Annotated[str, Field(max_length=53, pattern=DNS1123_LABEL)] = Field(description="Helm release name.")
    chart: str = Field(
        min_length=1,
        description="Chart reference as helm takes it: repo/name, oci://..., or a local chart starting with ./ or ../ (relative to the fleet file).",
    )
    version: str | None = Field(
        default=None, min_length=1, description="Chart version (--version); default: whatever helm picks."
    )
    values_files: list[Annotated[str, Field(min_length=1)]] | None = Field(
        default=None,
        description="The release's own values files, relative to the fleet file; passed before the workload's fragment.",
    )


class Workload(_Model):
    """A service that runs on one pool; gpustack-gen writes its resources and scheduling fragment."""

    name: DnsLabel = Field(description="Workload name, unique per namespace in the cluster.")
    namespace: DnsLabel = Field(description="Namespace of the workload.")
    pool: DnsLabel = Field(description="Name of the node pool it runs on.")
    gpus: int = Field(default=1, ge=1, le=64, description="GPUs (or MIG devices, or shared replicas) per pod.")
    replicas: int = Field(
        default=1, ge=0, le=100_000, description="Pod replicas; the pool must have room for gpus x replicas."
    )
    mig_profile: str | None = Field(
        default=None,
        description="On MIG pools: the MIG profile each pod asks for (required under the mixed strategy when the layout has several).",
    )
    cpu: Quantity | None = Field(default=None, description="CPU request as a Kubernetes quantity, e.g. 300m or 2.")
    memory: Quantity | None = Field(default=None, description="Memory request as a Kubernetes quantity, e.g. 3Gi.")
    gpu_memory: Quantity | None = Field(
        default=None,
        description="On HAMi pools: GPU memory per GPU as a Kubernetes quantity, e.g. 3Gi (written as MiB in nvidia.com/gpumem).",
    )
    gpu_memory_percent: int | None = Field(
        default=None,
        ge=1,
        le=100,
        description="On HAMi pools: GPU memory per GPU as a percentage of the GPU's (nvidia.com/gpumem-percentage); instead of gpuMemory.",
    )
    gpu_cores: int | None = Field(
        default=None,
        ge=1,
        le=100,
        description="On HAMi pools: percentage of each GPU's compute (nvidia.com/gpucores). Without it and without a memory limit, HAMi gives the pod whole GPUs.",
    )
    helm: WorkloadRelease | None = Field(
        default=None,
        description="The Helm release that deploys the workload (optional; makes plan's redeploy commands runnable).",
    )


WrapTarget = Literal["argocd", "flux", "helmfile"]
FLUX_DURATION = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"


class ArgoCdDestination(_Model):
    """The cluster Argo CD installs the chart into: `server` or `name`, not both."""

    server: str | None = Field(
        default=None,
        min_length=1,
        pattern=r"^https?://\S+$",
        description="API server URL of the cluster as Argo CD knows it. Default: https://kubernetes.default.svc (the cluster Argo CD runs in).",
    )
    name: str | None = Field(
        default=None,
        min_length=1,
        max_length=253,
        description="Name of the cluster as registered in Argo CD, instead of `server` (one Argo CD for the whole fleet).",
    )


class ArgoCdAutomated(_Model):
    """Automated sync: Argo CD syncs whenever the desired state changes."""

    enabled: bool | None = Field(
        default=None,
        description="Sync automatically (default true once `automated` is given; false turns off a fleet default).",
    )
    prune: bool | None = Field(
        default=None, description="Delete resources that are no longer rendered by the chart (default false)."
    )
    self_heal: bool | None = Field(
        default=None, description="Revert changes made in the cluster outside Git (default false)."
    )


class ArgoCdSyncPolicy(_Model):
    """The Application's sync policy (CreateNamespace and ServerSideApply are always set)."""

    automated: ArgoCdAutomated | None = Field(
        default=None, description="Automated sync. Default: none, Argo CD waits for a manual sync."
    )


class ArgoCdSettings(_Model):
    """The Argo CD Application written by `--wrap argocd` (`argocd-application.yaml`)."""

    project: str | None = Field(
        default=None,
        min_length=1,
        max_length=253,
        pattern=DNS1123_SUBDOMAIN,
        description='Argo CD project of the Application (default "default").',
    )
    destination: ArgoCdDestination | None = Field(
        default=None, description="Target cluster; a cluster's destination replaces the fleet default as a whole."
    )
    namespace: DnsLabel | None = Field(
        default=None,
        description="Namespace of the Application object, where Argo CD watches for Applications (default argocd).",
    )
    sync_policy: ArgoCdSyncPolicy | None = Field(default=None, description="Sync policy.")


class FluxSettings(_Model):
    """The Flux source and HelmRelease written by `--wrap flux` (`flux-helmrelease.yaml`)."""

    namespace: DnsLabel | None = Field(
        default=None, description="Namespace of the HelmRelease and its source (default flux-system)."
    )
    interval: str | None = Field(
        default=None,
        pattern=FLUX_DURATION,
        description="How often Flux reconciles the release and fetches the source, as a Go duration (default 1h).",
    )
    source: Literal["helm", "oci"] | None = Field(
        default=None,
        description="helm (a HelmRepository, default) or oci (an OCIRepository; needs `url`: NVIDIA documents no OCI location).",
    )
    url: str | None = Field(
        default=None,
        pattern=r"^(https?|oci)://\S+$",
        description="Chart source. helm: the Helm repository (default https://helm.ngc.nvidia.com/nvidia); oci: the oci:// repository of the gpu-operator chart in your mirror.",
    )
    release_name: str | None = Field(
        default=None,
        max_length=53,
        pattern=DNS1123_LABEL,
        description="Helm release name (default gpu-operator, as in the helm command of gpu-operator-values.yaml).",
    )


class DeliverySettings(_Model):
    """GitOps delivery objects written beside the values, pinned to the same chart version."""

    wrap: list[WrapTarget] | None = Field(
        default=None,
        description="Wrappers to write: argocd, flux, helmfile (default none; `render --wrap` adds to them). A cluster's list replaces the fleet default.",
    )
    argocd: ArgoCdSettings | None = Field(default=None, description="Argo CD Application settings.")
    flux: FluxSettings | None = Field(default=None, description="Flux HelmRelease settings.")


class RetiredMigConfig(_Model):
    """A MIG config nodes may still be labelled with while a rollout moves them to another one."""

    gpu: str = Field(
        min_length=1, description="GPU model the config was for: a catalog id or an nvidia.com/gpu.product label value."
    )
    layout: dict[str, Annotated[int, Field(ge=1)]] | None = Field(
        default=None, min_length=1, description="The old MIG layout: profile -> instances per GPU."
    )
    config: str | None = Field(default=None, min_length=1, description="The old built-in mig-parted config name.")


class RetiredConfigs(_Model):
    """Configs the ConfigMaps keep after the fleet stopped using them, until no node carries their label.

    `gpustack-gen plan` says which entries a change needs here; remove them in a later change, once the
    rollout is done (the plan of that change checks that no node still carries them).
    """

    device_plugin_configs: dict[Annotated[str, Field(pattern=CONFIGMAP_KEY)], SharingPolicy] | None = Field(
        default=None,
        description="Device-plugin ConfigMap key -> the sharing policy it held (strategy none, time-slicing or mps).",
    )
    mig_configs: list[RetiredMigConfig] | None = Field(
        default=None,
        description="MIG configs (GPU model and layout or built-in config) the mig-parted ConfigMap keeps.",
    )


NodeGroupProvider = Literal["karpenter", "eksctl", "gke", "aks", "cluster-api"]
# The duration pattern of Prometheus and of the PrometheusRule CRD (its ``for``), without the empty string.
PROMETHEUS_DURATION = r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"


def _rule_labels(value: dict[str, str]) -> dict[str, str]:
    for key, label_value in value.items():
        problem = explain_label_key(key) or explain_label_value(label_value)
        if problem:
            raise PydanticCustomError(
                "label", "{problem}", {"problem": problem, "hint": "e.g. release: kube-prometheus-stack", "key": key}
            )
    return value


class NodeGroupSettings(_Model):
    """What creates the cluster's GPU nodes: gpustack-gen writes each pool's labels and taints in its format."""

    provider: NodeGroupProvider | None = Field(
        default=None,
        description="karpenter (a NodePool per pool), eksctl (a managed node group), gke (a google_container_node_pool's node_config for Terraform), aks (a node pool's labels and taints) or cluster-api (a MachineDeployment); written to node-groups/<pool>.<provider>.yaml. Default: none written.",
    )


class AlertSettings(_Model):
    """Prometheus alerts from the intent: a PrometheusRule (alerts.yaml) comparing what nodes advertise with the fleet."""

    enabled: bool | None = Field(default=None, description="Write alerts.yaml (default false).")
    namespace: DnsLabel | None = Field(
        default=None, description="Namespace of the PrometheusRule (default monitoring)."
    )
    rule_labels: Annotated[dict[str, str], AfterValidator(_rule_labels)] | None = Field(
        default=None,
        description="Labels of the PrometheusRule object, for the Prometheus ruleSelector, e.g. {release: kube-prometheus-stack}. A cluster's map replaces the fleet default.",
    )
    node_at_zero_for: Annotated[str, Field(min_length=1, pattern=PROMETHEUS_DURATION)] | None = Field(
        default=None,
        description="How long a GPU node may advertise no GPUs before the alert fires, a Prometheus duration (default 10m).",
    )
    gpu_memory_percent: int | None = Field(
        default=None,
        ge=50,
        le=100,
        description="Time-sliced pools: warn when a GPU's memory is this full, in percent (default 90).",
    )
    fleet_file: str | None = Field(
        default=None,
        min_length=1,
        max_length=253,
        description="The fleet file's path as the on-call runs gpustack-gen verify (the alerts name that command; default fleet.yaml).",
    )


class ClusterSettings(_Model):
    """Settings a cluster can take from the fleet defaults."""

    kubernetes: Annotated[str, Field(json_schema_extra={"pattern": KUBERNETES_VERSION})] | None = Field(
        default=None, description='Kubernetes version of the cluster, quoted: "1.29.15".'
    )
    container_runtime: Literal["containerd", "cri-o"] | None = Field(
        default=None, description="Container runtime of the GPU nodes (default containerd)."
    )
    container_runtime_version: Annotated[str, Field(pattern=r"^[0-9]{1,4}\.[0-9]{1,4}(\.[0-9]{1,6})?$")] | None = Field(
        default=None,
        description='Version of that runtime on the GPU nodes, quoted: "1.29.1" (kubectl get nodes -o wide, '
        "CONTAINER-RUNTIME). Where CDI is on by default (CRI-O 1.27+, containerd 2.0+), backend dra needs no CDI "
        "switch of the Operator.",
    )
    mig: MigSettings | None = Field(default=None, description="How MIG devices are advertised.")
    operator: OperatorSettings | None = Field(default=None, description="GPU Operator chart settings.")
    sharing: dict[str, SharingPolicy] | None = Field(
        default=None, description="Sharing policy per GPU model (catalog id), plus `default` for every other model."
    )
    delivery: DeliverySettings | None = Field(
        default=None,
        description="GitOps delivery: Argo CD, Flux and helmfile wrappers around the chart and its values.",
    )
    backend: BackendName | None = Field(
        default=None,
        description="What advertises the GPUs to Kubernetes: "
        + listing([backend.SUMMARY for backend in SEMANTICS.values()])
        + ".",
    )
    hami: HamiSettings | None = Field(default=None, description="HAMi chart settings (backend hami).")
    default_sharing: str | None = Field(
        default=None,
        min_length=1,
        description="What GPU nodes without the nvidia.com/device-plugin.config label get: auto (default: the config every pool shares, when they all use one; else whole GPUs), none (whole GPUs), or the name of a pool whose config they take.",
    )
    dra: DraSettings | None = Field(default=None, description="The NVIDIA DRA driver chart (backend dra).")
    device_plugin: DevicePluginSettings | None = Field(
        default=None, description="The standalone NVIDIA device plugin chart (backend device-plugin)."
    )
    node_groups: NodeGroupSettings | None = Field(
        default=None,
        description="What creates the GPU nodes: each pool's node-group fragment with its labels and taints.",
    )
    alerts: AlertSettings | None = Field(
        default=None, description="Prometheus alerts comparing what the nodes advertise with the fleet (alerts.yaml)."
    )


class Cluster(ClusterSettings):
    """One Kubernetes cluster with GPU nodes."""

    name: DnsLabel = Field(description="Cluster name, unique in the fleet; also the name of its output folder.")
    kube_context: KubeContext | None = Field(
        default=None,
        description="The kubeconfig context that reaches the cluster, named by every printed kubectl (--context) and helm (--kube-context) command and used by verify --cluster (default: the cluster's name).",
    )
    node_pools: list[NodePool] = Field(min_length=1, description="The cluster's groups of identical GPU nodes.")
    workloads: list[Workload] = Field(
        default_factory=list,
        description="Services that run on the pools; each gets a values fragment with its GPU resources.",
    )
    retired: RetiredConfigs | None = Field(
        default=None,
        description="Configs kept in the ConfigMaps while nodes may still carry their labels during a rollout (see gpustack-gen plan).",
    )


class FleetSpec(_Model):
    """A fleet of Kubernetes clusters with NVIDIA GPUs (gpustack-gen intent file)."""

    api_version: Literal["gpustack-gen/v1alpha1"] = Field(description="Version of the intent format.")
    kind: Literal["Fleet"] = Field(description="Always Fleet.")
    defaults: ClusterSettings | None = Field(
        default=None, description="Deep-merged into every cluster; the cluster's own value wins."
    )
    clusters: list[Cluster] = Field(min_length=1, description="The clusters of the fleet.")


def fleet_json_schema() -> dict[str, Any]:
    """The fleet file's JSON Schema in draft-07 form (yaml-language-server completes it)."""
    schema = FleetSpec.model_json_schema(by_alias=True, mode="validation")
    text_defs = schema.pop("$defs", {})
    result: dict[str, Any] = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": "https://gpustack-gen.dev/schemas/fleet.schema.json",
    }
    result.update(_to_draft7(schema))
    result["definitions"] = {name: _to_draft7(body) for name, body in sorted(text_defs.items())}
    return result


_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def _to_draft7(node: Any) -> Any:
    """Rewrite ``$defs`` references and drop pydantic's titles and ``null`` alternatives of optional fields.

    Bounds that are whole numbers are written as integers: pydantic 2.7 writes a float field's ``gt=0`` as
    ``0.0`` and newer releases as ``0``, and the schema must not depend on which one is installed.
    """
    if isinstance(node, dict):
        variants = node.get("anyOf")
        if isinstance(variants, list) and {"type": "null"} in variants and node.get("default", 0) is None:
            rest = [v for v in variants if v != {"type": "null"}]
            merged = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
            node = {**(rest[0] if len(rest) == 1 else {"anyOf": rest}), **merged}
        if "const" in node and node.get("enum") == [node["const"]]:
            node = {k: v for k, v in node.items() if k != "enum"}  # older pydantic writes both
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "title":
                continue
            if key == "$ref" and isinstance(value, str):
                out[key] = value.replace("#/$defs/", "#/definitions/")
            elif key in _BOUNDS and isinstance(value, float) and value.is_integer():
                out[key] = int(value)
            else:
                out[key] = _to_draft7(value)
        return out
    if isinstance(node, list):
        return [_to_draft7(item) for item in node]
    return node
