"""What the NVIDIA device plugin's wings share (the GPU Operator's plugin and the standalone chart's): the same
config file, keyed the same way, so a node without its config label is read the same way on both."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...compile.config_names import config_names
from ...errors import Severity
from ...model.fleet import DEFAULT_DEVICE_PLUGIN_KEY
from ..model import Fallback

if TYPE_CHECKING:
    from ..model import NodeView


def default_key_fallback(view: NodeView) -> Fallback:
    """A node of a pool without ``nvidia.com/device-plugin.config`` gets the ``any`` key: a warning where that holds
    the pool's config, else an error naming what it gets instead."""
    names = config_names(view.expected.cluster)
    pool = view.pool.pool
    holds = names.default_sharing.describe()
    if names.device_plugin_configs[DEFAULT_DEVICE_PLUGIN_KEY] == names.device_plugin_configs[pool.name]:
        return Fallback(
            Severity.WARNING,
            f"covered by {DEFAULT_DEVICE_PLUGIN_KEY}, which holds the same config ({holds}); label it, so that a later "
            "change to the pool reaches it",
        )
    return Fallback(
        Severity.ERROR,
        f"it gets {DEFAULT_DEVICE_PLUGIN_KEY}, which holds {holds}, instead of {pool.name}'s {pool.sharing.describe()}",
    )
