"""Nodes keep their labels until relabelled: a config their label names must stay in the new ConfigMaps.

A device-plugin key or MIG config that the old nodes carry and the new ConfigMaps drop would fail the
next restart on those nodes (config-manager: "specified config X does not exist", the plugin never
starts; mig-manager: state failed, and after a reboot no MIG devices at all), and with Argo CD or Flux
the new ConfigMaps land before any node is relabelled. The fix is to keep the entry under the cluster's
``retired`` until no node carries it; a later change removes it (``prune``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ...compile.artifact import DEVICE_PLUGIN_LABEL, MIG_CONFIG_LABEL
from ...model.fleet import Pool, Sharing
from ..context import ClusterChange
from ..model import Finding, Level, Outcome

ID = "retention"
LEVEL = Level.ERROR


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    for pool, label, value, retired in missing(change):
        yield _missing(change, pool, label, value, _flow(retired))


def missing(change: ClusterChange) -> Iterator[tuple[Pool, str, str, dict[str, Any]]]:
    """(pool, label, value, the ``retired`` entry that keeps it) for each label old nodes carry and the
    new ConfigMaps drop."""
    if change.old is None or change.new is None or not change.keeps_labelled_configs():
        return
    old, _ = change.both
    live_keys = change.new_names.device_plugin_configs
    live_mig = change.new_names.mig_configs
    for pool in old.pools:
        if pool.nodes == 0:
            continue  # no node carries the pool's labels
        labels = change.old_labels[pool.name]
        key = labels.get(DEVICE_PLUGIN_LABEL)
        if key is not None and key not in live_keys:
            policy = _policy(pool.sharing if pool.sharing.is_shared else Sharing("none"))
            yield pool, DEVICE_PLUGIN_LABEL, key, {"devicePluginConfigs": {key: policy}}
        mig = labels.get(MIG_CONFIG_LABEL)
        if mig is not None and mig not in live_mig:
            yield pool, MIG_CONFIG_LABEL, mig, {"migConfigs": [_mig_entry(pool)]}


def retired_entries(change: ClusterChange) -> dict[str, Any]:
    """The ``retired`` block that keeps every label old nodes carry, merged (empty when none is needed)."""
    block: dict[str, Any] = {}
    for _, _, _, entry in missing(change):
        for kind, value in entry.items():
            if isinstance(value, dict):
                block.setdefault(kind, {}).update(value)
            else:
                block.setdefault(kind, []).extend(value)
    return block


def _missing(change: ClusterChange, pool: Pool, label: str, value: str, snippet: str) -> Outcome:
    kept = pool.name in change.new_pools or change.renamed(pool.name)
    still = "until they are relabelled" if kept else "until they are removed"
    return Outcome(
        Finding(
            ID,
            LEVEL,
            f"the nodes of pool {pool.name} carry {label}={value} {still}, and the new ConfigMaps drop it: the next "
            "restart of their operands (a reboot, an Operator upgrade, a GitOps sync that lands first) would fail",
            pool.name,
            (pool.name,),
            f"keep it while the rollout runs: add to cluster {change.name}: retired: {snippet}; remove it in a later "
            "change, once no node carries the label",
        )
    )


def _policy(sharing: Sharing) -> dict[str, Any]:
    fields: dict[str, Any] = {"strategy": sharing.strategy}
    if sharing.is_shared:
        fields["replicas"] = sharing.replicas
        if sharing.rename_by_default:
            fields["renameByDefault"] = True
        if sharing.fail_requests_greater_than_one != (sharing.strategy == "mps"):
            fields["failRequestsGreaterThanOne"] = sharing.fail_requests_greater_than_one
    return fields


def _mig_entry(pool: Pool) -> dict[str, Any]:
    fields: dict[str, Any] = {"gpu": pool.gpu.id}
    if pool.sharing.mig_layout:
        fields["layout"] = dict(pool.sharing.mig_layout)
    else:
        fields["config"] = pool.sharing.mig_config
    return fields


def _flow(value: object) -> str:
    """YAML flow style that pastes into the fleet file: keys bare, profile names quoted."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _key(key: object) -> str:
    text = str(key)
    return json.dumps(text) if "." in text or "+" in text else text
