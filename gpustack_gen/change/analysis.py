"""Run every rule on one cluster's change and order their steps into a runbook.

Steps go by phase (:class:`~.model.Phase`), then by pool in the cluster's order, then in the order the
rules gave them. Steps that run the same command are one step: the ConfigMaps are applied once, the
device plugin restarted once, whichever rules asked for it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..compile.backends import backend_of
from ..errors import InternalError
from ..model.fleet import Cluster
from ..shell import Script, all_of, in_cluster
from ..workdir import Paths
from . import delivery
from .capacity import CapacityChange, capacity_changes
from .context import ClusterChange
from .model import Action, Finding, Level, Outcome, Step
from .rules import RULE_IDS, RULES


@dataclass(frozen=True)
class ClusterAnalysis:
    """A cluster's change: capacity per pool, what the rules found, and the ordered steps."""

    name: str
    capacity: tuple[CapacityChange, ...]
    outcomes: tuple[Outcome, ...]
    steps: tuple[Step, ...]

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Highest level first, then in rule order and by pool."""
        order = {rule: i for i, rule in enumerate(RULE_IDS)}
        found = [outcome.finding for outcome in self.outcomes]
        return tuple(sorted(found, key=lambda f: (-f.level.rank, order.get(f.rule, len(order)), f.pool or "")))

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.level is Level.ERROR)


def analyse(old: Cluster | None, new: Cluster | None, paths: Paths | None = None) -> ClusterAnalysis:
    change = ClusterChange(old, new, paths or Paths())
    outcomes = tuple(_with_actions(outcome) for rule in RULES for outcome in rule.outcomes(change))
    cluster = new or old
    assert cluster is not None
    steps = _in_cluster(_order(change, [step for outcome in outcomes for step in outcome.steps]), cluster.kube_context)
    refused = any(outcome.finding.level is Level.ERROR for outcome in outcomes)
    if old is not None and new is not None and not refused:
        _check_complete(change, steps)
    return ClusterAnalysis(change.name, capacity_changes(old, new), outcomes, steps)


def _with_actions(outcome: Outcome) -> Outcome:
    actions = tuple(dict.fromkeys(step.action.value for step in outcome.steps))
    return Outcome(replace(outcome.finding, actions=actions), outcome.steps)


def _order(change: ClusterChange, steps: list[Step]) -> tuple[Step, ...]:
    ranked = sorted(enumerate(steps), key=lambda item: (item[1].phase, change.pool_index(item[1].pool), item[0]))
    merged: list[Step] = []
    by_key: dict[object, int] = {}
    for _, step in ranked:
        key = _merge_key(step)
        if key is None or key not in by_key:
            if key is not None:
                by_key[key] = len(merged)
            merged.append(step)
            continue
        index = by_key[key]
        merged[index] = _merge(merged[index], step)
    return tuple(merged)


def _merge_key(step: Step) -> object:
    """Steps run once: the same command, or the same pool's node-group template (a step no command does)."""
    if step.action is Action.NODE_GROUP:
        return (step.action, step.pool)
    return step.command


def _in_cluster(steps: tuple[Step, ...], context: str) -> tuple[Step, ...]:
    """Every command of the runbook names the cluster's kube context: pasted in a shell whose current context is
    another cluster, it still reaches this one."""

    def bound(script: Script | None) -> Script | None:
        return None if script is None else in_cluster(script, context)

    return tuple(replace(step, command=bound(step.command), verify=bound(step.verify)) for step in steps)


def _merge(first: Step, other: Step) -> Step:
    def join(a: str | None, b: str | None, separator: str) -> str | None:
        parts = [part for part in (a, b) if part]
        return separator.join(dict.fromkeys(parts)) or None

    def both(a: Script | None, b: Script | None) -> Script | None:
        parts = [part for part in (a, b) if part is not None]
        return all_of(*dict.fromkeys(parts)) if parts else None

    action = first.action
    if Action.APPLY_CONFIGMAPS in (first.action, other.action):
        action = Action.APPLY_CONFIGMAPS  # a pruning apply that also adds is an apply
    return replace(
        first,
        action=action,
        verify=both(first.verify, other.verify),
        reason=join(first.reason, other.reason, "; ") or "",
        pool=first.pool if first.pool == other.pool else None,
        rule=join(first.rule, other.rule, ",") or first.rule,
    )


def _check_complete(change: ClusterChange, steps: tuple[Step, ...]) -> None:
    """A change of the Operator's settings, of the backend's objects (ConfigMaps) or of its own charts that no
    step carries out is a missing rule."""
    actions = {step.action for step in steps}
    if change.operator_on_both() and change.operator_differs() and Action.OPERATOR not in actions:
        raise InternalError("plan", change.name, "the Operator's settings change but no rule upgrades it")
    old, new = change.both
    if _objects(old) != _objects(new) and not actions & {Action.APPLY_CONFIGMAPS, Action.PRUNE}:
        raise InternalError("plan", change.name, "the ConfigMaps change but no rule applies them")
    # Where Argo CD or Flux delivers the charts, the backend's release is upgraded by the controller's sync.
    delivered = delivery.controller(new) is not None and Action.OPERATOR in actions
    if _releases(old) != _releases(new) and Action.BACKEND not in actions and not delivered:
        raise InternalError("plan", change.name, "the backend's chart or its values change but no rule upgrades it")


def _objects(cluster: Cluster) -> list[tuple[str, tuple[dict[str, Any], ...]]]:
    return [(artifact.path, artifact.documents) for artifact in backend_of(cluster).objects(cluster)]


def _releases(cluster: Cluster) -> list[tuple[str, str, str, dict[str, Any]]]:
    return [(r.name, r.version, r.namespace, r.values) for r in backend_of(cluster).releases(cluster)]
