"""Standalone NVIDIA device plugin chart versions (``nvdp/nvidia-device-plugin``), the way :mod:`.gpu_operator`
knows GPU Operator charts.

Each release has its chart's ``values.yaml`` in ``../shared/upstream/device-plugin/`` as
``k8s-device-plugin-v<version>-helm-values.yaml``; the conformance tests hold the key table of
``validate/backends/device_plugin.py`` against it.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import UnknownVersion, VersionTuple, find_release, parse_version

# NVIDIA/k8s-device-plugin@v0.20.0 README.md:646-668: `helm repo add nvdp https://nvidia.github.io/k8s-device-plugin`,
# then `helm upgrade -i nvdp nvdp/nvidia-device-plugin --namespace nvidia-device-plugin --create-namespace`.
DEVICE_PLUGIN_REPOSITORY = "https://nvidia.github.io/k8s-device-plugin"
DEVICE_PLUGIN_REPOSITORY_NAME = "nvdp"
DEVICE_PLUGIN_CHART = "nvidia-device-plugin"
DEVICE_PLUGIN_RELEASE = "nvdp"
DEVICE_PLUGIN_NAMESPACE = "nvidia-device-plugin"

# MPS sharing and the chart's MPS control daemon arrived in v0.15.0 (k8s-device-plugin CHANGELOG v0.15.0; the
# v0.14.5 values have no `mps` key, k8s-device-plugin-v0.14.5-helm-values.yaml).
MPS_FROM: VersionTuple = (0, 15, 0)


@dataclass(frozen=True, slots=True)
class DevicePluginVersion:
    """One chart release (chart version as Helm wants it: no leading "v", as in its Chart.yaml)."""

    version: str

    @property
    def key(self) -> VersionTuple:
        parsed = parse_version(self.version)
        assert parsed is not None  # the table below is well-formed; a test checks it
        return parsed

    @property
    def plugin(self) -> str:
        """The plugin image's tag, the chart's appVersion: ``v0.17.4`` (chart-v0.17.4/Chart.yaml)."""
        return f"v{self.version}"

    @property
    def has_mps(self) -> bool:
        return self.key >= MPS_FROM


DEVICE_PLUGIN_VERSIONS: tuple[DevicePluginVersion, ...] = (
    DevicePluginVersion("0.14.5"),
    DevicePluginVersion("0.17.4"),
    DevicePluginVersion("0.20.0"),
)
NEWEST_DEVICE_PLUGIN: DevicePluginVersion = DEVICE_PLUGIN_VERSIONS[-1]


def device_plugin_version_names() -> tuple[str, ...]:
    return tuple(v.version for v in DEVICE_PLUGIN_VERSIONS)


class UnknownDevicePluginVersion(UnknownVersion):
    """A standalone device plugin chart version gpustack-gen has no facts for; ``hint`` names the known ones."""

    def __init__(self, text: str) -> None:
        super().__init__(
            f"unknown nvidia-device-plugin chart version {text!r}; known: {', '.join(device_plugin_version_names())}"
        )
        self.hint = f'pin one of them, quoted: "{NEWEST_DEVICE_PLUGIN.version}"'


def require_device_plugin_version(text: str) -> DevicePluginVersion:
    """The known release ``text`` names (``"0.17.4"`` or ``"v0.17.4"``); raises :class:`UnknownDevicePluginVersion`."""
    found = find_release(text, DEVICE_PLUGIN_VERSIONS)
    if found is None:
        raise UnknownDevicePluginVersion(text)
    return found
