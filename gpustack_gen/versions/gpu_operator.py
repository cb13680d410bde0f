"""GPU Operator chart versions gpustack-gen knows, what each ships, and which keys each has.

Facts come from the chart's ``values.yaml`` and ClusterPolicy CRD at each tag and the release notes
(see the project README for sources). The conformance tests hold this table against the upstream files.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import VersionTuple, parse_version


@dataclass(frozen=True, slots=True)
class OperatorVersion:
    """One GPU Operator chart release and the component versions it pins."""

    version: str  # chart version as Helm wants it, with the leading "v"
    device_plugin: str
    mig_manager: str
    verified: bool  # True where the chart's values.yaml and CRD were checked key by key
    driver: str | None = None  # the chart's default driver.version; None where gpustack-gen does not know it

    @property
    def key(self) -> VersionTuple:
        parsed = parse_version(self.version)
        assert parsed is not None  # the table below is well-formed; a test checks it
        return parsed

    def at_least(self, version: str) -> bool:
        parsed = parse_version(version)
        assert parsed is not None
        return self.key >= parsed

    # Feature gates, each named after the behaviour it switches.

    @property
    def gfd_labels_full_driver_version(self) -> bool:
        """GFD sets ``nvidia.com/cuda.driver-version.full`` from v24.3.0, where it is the device plugin's image
        (k8s-device-plugin@v0.15.0 ``internal/lm/nvml.go:115``); v23.9.2's standalone GFD v0.8.2 sets only
        ``nvidia.com/cuda.driver.major|minor|rev`` (gpu-feature-discovery@v0.8.2 ``internal/lm/nvml.go:98-101``)."""
        return self.at_least("v24.3.0")

    @property
    def has_mps(self) -> bool:
        """MPS sharing and the MPS control daemon operand arrived in v24.3.0."""
        return self.at_least("v24.3.0")

    @property
    def has_cdi_default(self) -> bool:
        """``cdi.default`` selects the CDI runtime class up to v25.3.x; from v25.10.0 it is a no-op."""
        return not self.at_least("v25.10.0")

    @property
    def cdi_enabled_by_default(self) -> bool:
        """CDI is on unless disabled from v25.10.0."""
        return self.at_least("v25.10.0")

    @property
    def has_nri_plugin(self) -> bool:
        """``cdi.nriPluginEnabled`` exists from v26.3.0."""
        return self.at_least("v26.3.0")

    @property
    def has_default_runtime(self) -> bool:
        """``operator.defaultRuntime`` was removed from the chart in v25.3.0."""
        return not self.at_least("v25.3.0")

    @property
    def dynamic_mig_config(self) -> bool:
        """From v26.3.0 an empty ``migManager.config.name`` means a per-node generated mig-parted config."""
        return self.at_least("v26.3.0")


# verified=True: one folder per version in ../shared/upstream/gpu-operator/, and the conformance tests hold
# device_plugin / mig_manager against that chart's devicePlugin.version / migManager.version (OS suffix
# such as -ubi8 or -ubuntu20.04 stripped). The unverified rows have no chart files there; their component
# versions come from the release notes (v25.10.1: device plugin v0.18.1, MIG Manager 0.13.1) and the
# release bundle bumps (v26.3.3: device plugin v0.19.3, MIG Manager v0.14.2); their default drivers are the
# charts' driver.version (v25.10.1 values.yaml:146, v26.3.3 :135, as ../shared/research/real-world.md §7 read them).
OPERATOR_VERSIONS: tuple[OperatorVersion, ...] = (
    OperatorVersion("v23.9.2", device_plugin="v0.14.5", mig_manager="v0.6.0", verified=True, driver="550.54.14"),
    OperatorVersion("v24.3.0", device_plugin="v0.15.0", mig_manager="v0.7.0", verified=True, driver="550.54.15"),
    OperatorVersion("v24.6.2", device_plugin="v0.16.2", mig_manager="v0.8.0", verified=True, driver="550.90.07"),
    OperatorVersion("v24.9.2", device_plugin="v0.17.0", mig_manager="v0.10.0", verified=True, driver="550.144.03"),
    OperatorVersion("v25.3.0", device_plugin="v0.17.1", mig_manager="v0.12.1", verified=True, driver="570.124.06"),
    OperatorVersion("v25.3.3", device_plugin="v0.17.4", mig_manager="v0.12.3", verified=True, driver="580.82.07"),
    # v25.3.4: "580.82.07 (default)" in the release notes (NVIDIA/cloud-native-docs#317).
    OperatorVersion("v25.3.4", device_plugin="v0.17.4", mig_manager="v0.12.3", verified=False, driver="580.82.07"),
    OperatorVersion("v25.10.1", device_plugin="v0.18.1", mig_manager="v0.13.1", verified=False, driver="580.105.08"),
    OperatorVersion("v26.3.3", device_plugin="v0.19.3", mig_manager="v0.14.2", verified=False, driver="580.126.20"),
    OperatorVersion("v26.7.0", device_plugin="v0.20.0", mig_manager="v0.15.0", verified=True, driver="595.91.07"),
)

NEWEST_OPERATOR: OperatorVersion = OPERATOR_VERSIONS[-1]

_BY_KEY = {v.key: v for v in OPERATOR_VERSIONS}


def get_operator_version(text: str) -> OperatorVersion | None:
    parsed = parse_version(text)
    return None if parsed is None else _BY_KEY.get(parsed)


def operator_version_names() -> tuple[str, ...]:
    return tuple(v.version for v in OPERATOR_VERSIONS)


class UnknownOperatorVersion(ValueError):
    """A GPU Operator version gpustack-gen has no facts for; ``hint`` suggests the closest known ones."""

    def __init__(self, text: str) -> None:
        from ..suggest import suggest

        super().__init__(f"unknown GPU Operator version {text!r}; known: {', '.join(operator_version_names())}")
        close = suggest(text if text.startswith("v") else f"v{text}", operator_version_names(), n=2)
        self.hint = f"did you mean {' or '.join(close)}?" if close else "`gpustack-gen versions` lists them"


def require_operator_version(text: str) -> OperatorVersion:
    """The known release ``text`` names (``"v25.3.3"`` or ``"25.3.3"``); raises :class:`UnknownOperatorVersion`."""
    found = get_operator_version(text)
    if found is None:
        raise UnknownOperatorVersion(text)
    return found
