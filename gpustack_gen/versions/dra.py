"""NVIDIA DRA driver chart versions gpustack-gen knows, where each is published, and which gates it has.

The chart was renamed with the move to kubernetes-sigs: ``nvidia-dra-driver-gpu`` 25.12.0 comes from
NVIDIA's Helm repository, ``dra-driver-nvidia-gpu`` 0.4.x from registry.k8s.io by OCI, and the version
numbers went from calendar (25.12) to SemVer (0.4), so releases are ordered by this table, not by number
(``dra-driver/v0.4.1/docs/upgrade.md``). The conformance tests hold the verified rows against the chart
files in ``../shared/upstream/dra-driver/``.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import GPU_TAINT_TOLERATION, Toleration, UnknownVersion, find_release

# The driver feature gates gpustack-gen turns on, by the sharing strategy that needs them
# (api/nvidia.com/resource/v1beta1/validate.go: a strategy whose gate is off is refused).
GATE_TIME_SLICING = "TimeSlicingSettings"
GATE_MPS = "MPSSupport"
SHARING_GATES = {"time-slicing": GATE_TIME_SLICING, "mps": GATE_MPS}  # fleet sharing strategy -> its gate


@dataclass(frozen=True, slots=True)
class DraDriverVersion:
    """One release of the NVIDIA DRA driver chart."""

    version: str  # as ``helm --version`` takes it: strict SemVer, no "v" (Chart.yaml)
    chart: str  # the chart's name
    repository: str  # a Helm repository URL, or the oci:// prefix the chart sits under
    verified: bool  # True where the chart's values.yaml and feature gates are in ../shared/upstream/dra-driver/
    gates: frozenset[str]  # driver feature gates it knows (pkg/featuregates/featuregates.go)
    kubernetes_prerequisite: str | None = None  # the Kubernetes version its prerequisites page names
    # kubeletPlugin.tolerations by default (values.yaml), which a value of ours replaces
    kubelet_plugin_tolerations: tuple[Toleration, ...] = ()

    @property
    def oci(self) -> bool:
        return self.repository.startswith("oci://")

    @property
    def repository_name(self) -> str:
        """How ``helm repo add`` (NVIDIA's repository) or helmfile (the OCI registry) names the repository."""
        return K8S_REGISTRY_NAME if self.oci else NGC_REPOSITORY_NAME

    @property
    def sharing(self) -> tuple[str, ...]:
        """The fleet's sharing strategies this release can serve beyond whole GPUs and MIG: those whose gate it has."""
        return tuple(strategy for strategy, gate in SHARING_GATES.items() if gate in self.gates)

    @property
    def order(self) -> int:
        """Release order (the version numbers restarted at 0.x after 25.12)."""
        return DRA_VERSIONS.index(self)


NGC_REPOSITORY = "https://helm.ngc.nvidia.com/nvidia"
NGC_REPOSITORY_NAME = "nvidia"
_K8S_REGISTRY = "oci://registry.k8s.io/dra-driver-nvidia/charts"
K8S_REGISTRY_NAME = "dra-driver-nvidia"
_GATES_25_12 = frozenset(
    {
        "TimeSlicingSettings",
        "MPSSupport",
        "IMEXDaemonsWithDNSNames",
        "PassthroughSupport",
        "NVMLDeviceHealthCheck",
        "DynamicMIG",
        "ComputeDomainCliques",
        "CrashOnNVLinkFabricErrors",
    }
)
_GATES_0_4 = _GATES_25_12 | {"DeviceMetadata"}
# kubeletPlugin.tolerations: [] in 25.12.0 (deployments/helm/nvidia-dra-driver-gpu/values.yaml:222); nvidia.com/gpu
# Exists NoSchedule in 0.4.1 (added in bd9820f9; values.yaml:262-265), taken to hold for 0.4.0 as well (unverified:
# an extra toleration of a taint the nodes lack is harmless).

# Release order. v0.4.0 has no chart files in ../shared/upstream; its install guide names the same chart
# and registry as v0.4.1 (dra-driver/v0.4.1/docs/install.md, `--version 0.4.0`).
DRA_VERSIONS: tuple[DraDriverVersion, ...] = (
    DraDriverVersion("25.12.0", "nvidia-dra-driver-gpu", NGC_REPOSITORY, verified=True, gates=_GATES_25_12),
    DraDriverVersion(
        "0.4.0",
        "dra-driver-nvidia-gpu",
        _K8S_REGISTRY,
        verified=False,
        gates=_GATES_0_4,
        kubernetes_prerequisite="1.34.2",
        kubelet_plugin_tolerations=(GPU_TAINT_TOLERATION,),
    ),
    DraDriverVersion(
        "0.4.1",
        "dra-driver-nvidia-gpu",
        _K8S_REGISTRY,
        verified=True,
        gates=_GATES_0_4,
        kubernetes_prerequisite="1.34.2",
        kubelet_plugin_tolerations=(GPU_TAINT_TOLERATION,),
    ),
)
NEWEST_DRA: DraDriverVersion = DRA_VERSIONS[-1]


def dra_version_names() -> tuple[str, ...]:
    return tuple(v.version for v in DRA_VERSIONS)


class UnknownDraVersion(UnknownVersion):
    """A DRA driver chart version gpustack-gen has no facts for; ``hint`` names the known ones."""

    def __init__(self, text: str) -> None:
        from ..suggest import suggest

        super().__init__(f"unknown DRA driver chart version {text!r}; known: {', '.join(dra_version_names())}")
        close = suggest(text.removeprefix("v"), dra_version_names(), n=2)
        self.hint = (
            f"did you mean {' or '.join(close)}?"
            if close
            else f"write the chart version without a v, e.g. {NEWEST_DRA.version}"
        )


def require_dra_version(text: str) -> DraDriverVersion:
    """The known release ``text`` names (``"0.4.1"``; a leading ``v`` is accepted, as image tags carry one)."""
    found = find_release(text, DRA_VERSIONS)
    if found is None:
        raise UnknownDraVersion(text)
    return found
