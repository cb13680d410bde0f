"""Retired configs leave the ConfigMaps: first check that no node still carries their label."""

from __future__ import annotations

from collections.abc import Iterator

from ...compile.artifact import DEVICE_PLUGIN_LABEL, MIG_CONFIG_LABEL
from .. import commands
from ..context import ClusterChange
from ..model import Action, Finding, Level, Outcome, Phase, Step

ID = "prune"
LEVEL = Level.NONE


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if change.old is None or change.new is None or not change.keeps_labelled_configs():
        return
    _, new = change.both
    dropped = [
        (DEVICE_PLUGIN_LABEL, key)
        for key in change.old_names.device_plugin_configs
        if key not in change.new_names.device_plugin_configs and key not in change.old_names.device_plugin_keys.values()
    ]
    dropped += [
        (MIG_CONFIG_LABEL, name)
        for name in change.old_names.retired_mig_configs
        if name not in change.new_names.mig_configs
    ]
    if not dropped:
        return
    plan = [
        Step(
            Action.WAIT,
            commands.nodes_labelled(label, value),
            commands.no_nodes_labelled(label, value),
            f"no node may still carry {label}={value} when its config leaves the ConfigMap: this must list no "
            "node (relabel those it lists, and their node group template, first)",
            None,
            ID,
            Phase.CHECK,
        )
        for label, value in dropped
    ]
    plan.append(
        Step(
            Action.PRUNE,
            commands.apply(new, change.paths),
            commands.diff(new, change.paths),
            "apply the ConfigMaps without the retired entries",
            None,
            ID,
            Phase.APPLY,
        )
    )
    yield Outcome(
        Finding(
            ID,
            LEVEL,
            "retired configs leave the ConfigMaps: " + ", ".join(f"{label}={value}" for label, value in dropped),
            None,
            tuple(value for _, value in dropped),
        ),
        tuple(plan),
    )
