"""What a change does: findings for review (``diff``) and rollout steps (``plan``), from the same rules.

Plain, immutable data; nothing here imports the models or the compilers.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Any

from ..shell import Script, render


class Level(StrEnum):
    """How a change lands on a running cluster, from harmless to blocking."""

    NONE = "none"  # apply it; nothing restarts
    RESTART = "restart"  # a DaemonSet or the container runtime restarts; running GPU pods keep running
    DISRUPTIVE = "disruptive"  # GPU pods are stopped or cannot schedule: drain or redeploy first
    ERROR = "error"  # the new intent cannot be rolled out as written

    @property
    def rank(self) -> int:
        return _RANKS[self]


_RANKS = {Level.NONE: 0, Level.RESTART: 1, Level.DISRUPTIVE: 2, Level.ERROR: 3}


class Action(StrEnum):
    """The vocabulary of rollout steps."""

    CHECK = "check"  # a pre-flight: what would block a later step, found before anything changes
    APPLY_CONFIGMAPS = "apply-configmaps"
    OPERATOR = "operator"
    BACKEND = "backend"  # helm upgrade or uninstall of a device backend's own chart (HAMi, the DRA driver)
    NODE_GROUP = "node-group"  # the pool's node-group template: what an autoscaler's new nodes are born with
    LABEL_NODES = "label-nodes"
    RESTART_DEVICE_PLUGIN = "restart-device-plugin"
    DRAIN = "drain"
    WAIT = "wait"
    UNCORDON = "uncordon"
    UPDATE_WORKLOADS = "update-workloads"
    PRUNE = "prune"


class Phase(IntEnum):
    """Where a step goes in a cluster's runbook; steps of one phase keep the order of pools, then rules."""

    CHECK = 0  # confirm a precondition (no node still carries a retired label)
    APPLY = 1  # the ConfigMaps (with Argo CD or Flux: the sync)
    SYNC = 2  # wait until the kubelet has synced the ConfigMap volumes into the operand pods
    NODE_GROUPS = 3  # the node-group templates, before any node is relabelled: a node added meanwhile comes up right
    FIRST_LABELS = (
        4  # labels later steps find nodes by: a new cluster's (before the Operator's first reconcile), a new selector's
    )
    DRAIN = 5  # pools whose GPUs are repartitioned or whose resource names change
    OPERATOR = 6  # helm upgrade or the ClusterPolicy patch
    OPERATOR_WAIT = 7
    LABELS = 8
    RESTART = 9
    SETTLE = 10  # waits: MIG state, allocatable per node
    WORKLOADS = 11
    UNCORDON = 12
    RETIRE_NODES = 13  # pools leaving the cluster: drain, then wait for their nodes to go
    FINISH = 14  # after every pool moved to another backend: turn off and remove what no node uses any more


@dataclass(frozen=True)
class Step:
    """One rollout step: a command to run from where ``plan`` was run, and how to see that it is done.

    Rules build the commands without a cluster; the plan binds them to the cluster's kube context."""

    action: Action
    command: Script | None  # None: an action no command can do for you (the reason says what to do)
    verify: Script | None
    reason: str
    pool: str | None
    rule: str
    phase: Phase

    @property
    def command_text(self) -> str | None:
        return None if self.command is None else render(self.command)

    @property
    def verify_text(self) -> str | None:
        return None if self.verify is None else render(self.verify)

    def as_dict(self) -> dict[str, Any]:
        return {
            "action": self.action.value,
            "command": self.command_text,
            "verify": self.verify_text,
            "reason": self.reason,
            "pool": self.pool,
            "rule": self.rule,
        }


@dataclass(frozen=True)
class Finding:
    """One operational consequence of the change, for review; ``steps`` name the plan actions it needs."""

    rule: str  # stable identifier, e.g. "device-plugin-config", "mig-layout"
    level: Level
    message: str
    pool: str | None = None
    items: tuple[str, ...] = ()  # what it concerns, by name: workloads, pools
    hint: str = ""  # for errors: what to change in the fleet
    actions: tuple[str, ...] = ()  # the plan actions its steps take, in their order (filled in by ``analyse``)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "level": self.level.value,
            "pool": self.pool,
            "message": self.message,
            "items": list(self.items),
            "hint": self.hint or None,
            "actions": list(self.actions),
        }


@dataclass(frozen=True)
class Outcome:
    """What one rule finds in a change: the finding a reviewer reads and the steps that carry it out."""

    finding: Finding
    steps: tuple[Step, ...] = ()
