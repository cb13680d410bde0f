"""What every chart version table shares: reading and writing versions, finding a release, the GPU toleration.

One module per chart beside it (:mod:`.gpu_operator`, :mod:`.hami`, :mod:`.dra`) holds that chart's releases.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple, Protocol, TypeVar

VersionTuple = tuple[int, int, int]


# The toleration NVIDIA's charts give their node operands by default: the Operator's daemonsets.tolerations in every
# known version (NVIDIA/gpu-operator@v23.9.2 deployments/gpu-operator/values.yaml:31-34; v25.3.3 :39-42; v26.7.0
# :45-48), the DRA driver 0.4.1's kubeletPlugin.tolerations.
class Toleration(NamedTuple):
    """A chart's default toleration (hashable, as the version tables are)."""

    key: str
    operator: str
    effect: str


GPU_TAINT_TOLERATION = Toleration("nvidia.com/gpu", "Exists", "NoSchedule")

_VERSION_RE = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")


def parse_version(text: str) -> VersionTuple | None:
    """``"v25.3.3"`` or ``"25.3.3"`` -> ``(25, 3, 3)``; None when it is not of that form."""
    match = _VERSION_RE.fullmatch(text.strip())
    return None if match is None else _version(match)


def leading_version(text: object) -> VersionTuple | None:
    """The version an image tag or a kubelet version starts with: ``"v0.17.0-ubi8"`` -> ``(0, 17, 0)``."""
    match = _VERSION_RE.match(text.strip()) if isinstance(text, str) else None
    return None if match is None else _version(match)


def _version(match: re.Match[str]) -> VersionTuple:
    major, minor, patch = (int(part) for part in match.groups())
    return (major, minor, patch)


class Release(Protocol):
    @property
    def version(self) -> str: ...


ReleaseT = TypeVar("ReleaseT", bound=Release)


def find_release(text: str, releases: Iterable[ReleaseT]) -> ReleaseT | None:
    """The release of ``releases`` that ``text`` names, compared as versions (``"v2.10.0"``, ``"2.10.0"``); None
    when it names none. One reading for every chart table (HAMi, the DRA driver)."""
    wanted = parse_version(text)
    return next((release for release in releases if wanted and parse_version(release.version) == wanted), None)


class UnknownVersion(ValueError):
    """A chart version gpustack-gen has no facts for; ``hint`` says what to write instead."""

    hint: str


def format_version(version: VersionTuple) -> str:
    return "v{}.{}.{}".format(*version)
