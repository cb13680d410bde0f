"""Reading a backend's own Helm chart settings (``<backend>.version``, ``<backend>.namespace``), for its wing."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from ...versions import UnknownVersion

if TYPE_CHECKING:
    from ..resolve import Report, Setting

_Release = TypeVar("_Release")


def pinned_chart(
    report: Report,
    setting: Setting,
    key: str,
    newest: _Release,
    require: Callable[[str], _Release],
    default_namespace: str,
) -> tuple[_Release, str]:
    """A backend chart's pinned release (default: the newest known) and namespace, read from fleet key ``key``."""
    version, version_path = setting(key, "version")
    namespace, _ = setting(key, "namespace")
    release = newest
    if version is not None:
        assert version_path is not None
        try:
            release = require(version)
        except UnknownVersion as unknown:
            report.error(version_path, str(unknown), unknown.hint)
    return release, namespace or default_namespace
