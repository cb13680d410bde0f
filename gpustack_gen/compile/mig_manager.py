"""The MIG manager's part of the Operator's settings, for every backend whose Operator runs the MIG manager."""

from __future__ import annotations

from typing import Any

from ..catalog import ALL_DISABLED
from ..model.fleet import Cluster
from .artifact import MIG_PARTED_CONFIGMAP
from .config_names import config_names


def mig_manager_values(cluster: Cluster) -> dict[str, Any]:
    """The MIG manager reads the cluster's own mig-parted ConfigMap, when it has MIG-capable GPUs."""
    if not config_names(cluster).uses_mig_parted_config:
        return {}
    return {"migManager": {"config": {"name": MIG_PARTED_CONFIGMAP, "default": ALL_DISABLED}}}


def mig_manager_patch(cluster: Cluster) -> dict[str, Any]:
    """A merge patch keeps what it does not name: a cluster without MIG-capable GPUs deletes the reference."""
    if config_names(cluster).uses_mig_parted_config:
        return {}
    return {"migManager": {"config": {"name": None}}}
