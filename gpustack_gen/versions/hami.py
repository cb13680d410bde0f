"""HAMi chart versions gpustack-gen knows, the way :mod:`.gpu_operator` knows GPU Operator charts.

A verified version has its chart's ``values.yaml`` in ``../shared/upstream/hami/v<version>/``; the
conformance tests hold the key-gate table (``validate/backends/hami.py``) against it.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import UnknownVersion, VersionTuple, find_release, parse_version

HAMI_REPOSITORY = "https://project-hami.github.io/HAMi/"  # Project-HAMi/HAMi@v2.10.0 README.md
HAMI_REPOSITORY_NAME = "hami-charts"
HAMI_CHART = "hami"
HAMI_RELEASE = "hami"
HAMI_NAMESPACE = "kube-system"  # where upstream installs it (README.md: helm install ... -n kube-system)
# The kube-scheduler image HAMi's scheduler pod runs, the Kubernetes project's own; the chart defaults to a mirror,
# registry.cn-hangzhou.aliyuncs.com with google_containers/kube-scheduler (charts/hami/values.yaml:94-97).
DEFAULT_SCHEDULER_IMAGE = "registry.k8s.io/kube-scheduler"


@dataclass(frozen=True, slots=True)
class HamiVersion:
    """One HAMi chart release (chart version as Helm wants it: no leading "v", as in its Chart.yaml)."""

    version: str
    verified: bool

    @property
    def key(self) -> VersionTuple:
        """What the key gates compare (validate/backends/hami.py)."""
        parsed = parse_version(self.version)
        assert parsed is not None  # the table below is well-formed; a test checks it
        return parsed


# Chart hami 2.10.0, appVersion 2.10.0 (Project-HAMi/HAMi@v2.10.0 charts/hami/Chart.yaml).
HAMI_VERSIONS: tuple[HamiVersion, ...] = (HamiVersion("2.10.0", verified=True),)
NEWEST_HAMI: HamiVersion = HAMI_VERSIONS[-1]


def hami_version_names() -> tuple[str, ...]:
    return tuple(v.version for v in HAMI_VERSIONS)


class UnknownHamiVersion(UnknownVersion):
    """A HAMi chart version gpustack-gen has no facts for; ``hint`` names the known ones."""

    def __init__(self, text: str) -> None:
        super().__init__(f"unknown HAMi chart version {text!r}; known: {', '.join(hami_version_names())}")
        self.hint = f'pin one of them, quoted: "{NEWEST_HAMI.version}"'


def require_hami_version(text: str) -> HamiVersion:
    """The known release ``text`` names (``"2.10.0"`` or ``"v2.10.0"``); raises :class:`UnknownHamiVersion`."""
    found = find_release(text, HAMI_VERSIONS)
    if found is None:
        raise UnknownHamiVersion(text)
    return found
