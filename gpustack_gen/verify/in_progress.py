"""Nodes in a state a rollout passes through: reported as in progress with their expected end, not as errors.

- The mig-manager sets ``nvidia.com/mig.config.state=pending`` (``rebooting`` with ``WITH_REBOOT``) and pauses the
  node's operands (``nvidia.com/gpu.deploy.<operand>=paused-for-mig-change``) while it repartitions; the plugin,
  and with it the node's GPUs, return when it sets ``success``. A GPU a pod still holds makes it go ``failed``,
  which is an error (``NVIDIA/mig-parted@v0.12.3 deployments/container/reconfigure-mig.sh:484-504,583-587``;
  ``@v0.15.0 pkg/mig/reconfigure/reconfigure.go:158-162,370-386,206-209``).
- The driver upgrade controller walks ``nvidia.com/gpu-driver-upgrade-state`` from ``upgrade-required`` through
  cordon, pod deletion, drain, restart and validation to ``upgrade-done``; ``upgrade-failed`` is an error
  (``NVIDIA/k8s-operator-libs@7d667fbaa7ac pkg/upgrade/consts.go:43-67``).
- A cordoned node (``spec.unschedulable``) is one a drain step holds; ``plan`` uncordons it when its step ends.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..compile.artifact import DRIVER_UPGRADE_STATE_LABEL, MIG_CONFIG_LABEL, MIG_CONFIG_STATE_LABEL
from ..k8s_state import Node
from ..model.fleet import Cluster
from . import commands

PAUSED = "paused-for-mig-change"
DEPLOY_LABEL_PREFIX = "nvidia.com/gpu.deploy."
_MIG_BUSY = ("pending", "rebooting")
_DRIVER_SETTLED = ("", "upgrade-done", "upgrade-failed")
# The checks whose findings on such a node the rollout accounts for: what it advertises, registers and is labelled.
_EXPLAINS = frozenset(
    {"gpu-not-advertised", "capacity-mismatch", "node-registration", "gpu-health", "label-mismatch",
     "product-mismatch", "mig-state"}
)  # fmt: skip


@dataclass(frozen=True)
class InProgress:
    """What a node is in the middle of, and when that ends."""

    state: str  # "MIG reconfiguration to all-balanced pending"
    ends: str  # the event that ends it, with the command that waits for it
    explains: frozenset[str] = _EXPLAINS  # check ids whose error findings on the node it accounts for


def node_in_progress(cluster: Cluster, node: Node) -> InProgress | None:
    """The rollout state ``node`` is in, most telling first; None when it is in none."""
    mig_state = node.labels.get(MIG_CONFIG_STATE_LABEL)
    paused = sorted(k.removeprefix(DEPLOY_LABEL_PREFIX) for k, v in node.labels.items() if v == PAUSED)
    if mig_state in _MIG_BUSY or (paused and mig_state != "failed"):
        config = node.labels.get(MIG_CONFIG_LABEL)
        what = f"MIG reconfiguration to {config}" if config else "MIG reconfiguration"
        held = f", operands paused ({', '.join(paused)})" if paused else ""
        return InProgress(
            f"{what} {mig_state or 'under way'}{held}",
            f"when the mig-manager sets {MIG_CONFIG_STATE_LABEL}=success and the operands return: "
            + commands.run(
                cluster,
                "wait",
                f"node/{node.name}",
                f"--for=jsonpath={{{_label_path(MIG_CONFIG_STATE_LABEL)}}}=success",
                "--timeout=30m",
            )
            + " (failed instead: a pod still holds a GPU, drain the node)",
        )
    upgrade = node.labels.get(DRIVER_UPGRADE_STATE_LABEL, "")
    if upgrade not in _DRIVER_SETTLED:
        return InProgress(
            f"driver upgrade in progress ({DRIVER_UPGRADE_STATE_LABEL}={upgrade})",
            "when the label reads upgrade-done: "
            + commands.run(cluster, "get", "node", node.name, "-L", DRIVER_UPGRADE_STATE_LABEL, "-w"),
        )
    if node.unschedulable:
        return InProgress(
            "cordoned (a drain step holds it)",
            "when its step ends and it is uncordoned: " + commands.run(cluster, "uncordon", node.name),
        )
    return None


def _label_path(label: str) -> str:
    """A label as a JSONPath key: ``.metadata.labels.nvidia\\.com/mig\\.config\\.state``."""
    return ".metadata.labels." + label.replace(".", "\\.")
