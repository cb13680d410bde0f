"""Write the imported cluster as a fleet file: YAML built with ruamel's commented containers.

Every value carries a comment saying where it came from; what the importer could not decide is a
``# TODO`` comment next to the place it concerns (or in the header). User-supplied strings only ever
reach the file as scalars (quoted where a YAML 1.1 or 1.2 reader would take them for another type)
or as one-line comments: nothing is spliced into YAML text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic.alias_generators import to_camel

from ..compile.artifact import DEVICE_PLUGIN_CONFIGMAP, MIG_PARTED_CONFIGMAP
from ..model.intent import API_VERSION
from ..versions.device_plugin import DEVICE_PLUGIN_RELEASE
from ..yamlio.writer import dump_commented, reads_as_string
from .discover import NodeGroup
from .notes import CLUSTER, HEADER, OPERATOR, Todo, one_line, pool_place
from .recover import UPGRADE_POLICY_MODELLED, OperatorState, PoolSharing
from .standalone import DEVICE_PLUGIN, PluginState

_MAX_NAMES_IN_COMMENT = 6


@dataclass(frozen=True)
class PoolPlan:
    group: NodeGroup
    sharing: PoolSharing


@dataclass(frozen=True)
class ClusterPlan:
    """Everything decided about one imported cluster, ready to write."""

    name: str
    kubernetes: str | None
    kubernetes_note: str
    runtime: str | None
    runtime_note: str
    state: OperatorState | PluginState
    pools: tuple[PoolPlan, ...]
    todos: tuple[Todo, ...]
    sources: tuple[str, ...]


def _scalar(text: str) -> Any:
    """``text`` as a scalar that every YAML reader takes for a string."""
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    if not reads_as_string(text) or not text.isprintable() or text != text.strip() or not text:
        return DoubleQuotedScalarString(text)
    return text


def _names(names: Sequence[str]) -> str:
    shown = list(names[:_MAX_NAMES_IN_COMMENT])
    more = len(names) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _eol(mapping: Any, key: str, text: str) -> None:
    if text:
        mapping.yaml_add_eol_comment("# " + one_line(text), key, column=0)


def _before(mapping: Any, key: str, todos: Sequence[Todo], indent: int) -> None:
    lines = [f"TODO: {one_line(t.message)}" for t in todos]
    if lines:
        mapping.yaml_set_comment_before_after_key(key, before="\n".join(lines), indent=indent)


def _map(items: dict[str, Any]) -> Any:
    from ruamel.yaml.comments import CommentedMap

    result = CommentedMap()
    for key, value in items.items():
        result[_scalar(key) if isinstance(key, str) else key] = _scalar(value) if isinstance(value, str) else value
    return result


def write_fleet(plan: ClusterPlan) -> str:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    state = plan.state
    by_place: dict[str, list[Todo]] = {}
    for todo in plan.todos:
        by_place.setdefault(todo.place, []).append(todo)

    root = CommentedMap()
    root["apiVersion"] = API_VERSION
    root["kind"] = "Fleet"
    cluster = CommentedMap()
    cluster["name"] = _scalar(plan.name)
    if plan.kubernetes is not None:
        cluster["kubernetes"] = DoubleQuotedScalarString(plan.kubernetes)
        _eol(cluster, "kubernetes", plan.kubernetes_note or "--kubernetes")
    if plan.runtime is not None:
        cluster["containerRuntime"] = plan.runtime
        _eol(cluster, "containerRuntime", plan.runtime_note)
    if isinstance(state, PluginState):
        cluster["backend"] = "device-plugin"
        _eol(cluster, "backend", "the standalone nvidia-device-plugin chart runs, not the GPU Operator")
        cluster["devicePlugin"] = _device_plugin(state)
        _eol(cluster, "devicePlugin", "values the inputs do not set are left to the chart's defaults")
        block = "devicePlugin"
    else:
        strategy = state.settings.get("mig.strategy")
        if strategy is not None and strategy.value in ("single", "mixed"):
            cluster["mig"] = _map({"strategy": strategy.value})
            _eol(cluster, "mig", strategy.origin)
        cluster["operator"] = _operator(state, plan.name)
        _eol(cluster, "operator", "settings the inputs do not set are left to the chart's defaults")
        block = "operator"
    pools = CommentedSeq()
    for pool in plan.pools:
        pools.append(_pool(pool, by_place.get(pool_place(pool.group.name), [])))
    cluster["nodePools"] = pools
    second = "kubernetes" if "kubernetes" in cluster else block
    _before(cluster, second, by_place.get(CLUSTER, []), 4)
    _before(cluster, block, by_place.get(OPERATOR if block == "operator" else DEVICE_PLUGIN, []), 4)
    clusters = CommentedSeq()
    clusters.append(cluster)
    root["clusters"] = clusters

    header = [
        "Imported by gpustack-gen import from " + (", ".join(one_line(s) for s in plan.sources) or "no files") + ".",
        "Check every TODO, then: gpustack-gen import ... --check-roundtrip, gpustack-gen render.",
    ]
    header += [f"TODO: {one_line(t.message)}" for t in by_place.get(HEADER, [])]
    root.yaml_set_start_comment("\n".join(header))

    return dump_commented(root)


def user_values_file(cluster: str) -> str:
    """Where import writes the release's values the fleet model does not own, beside the fleet file."""
    return f"{cluster}-operator-values.yaml"


def _operator(state: OperatorState, cluster: str) -> Any:
    from ruamel.yaml.comments import CommentedMap

    operator = CommentedMap()
    operator["version"] = _scalar(state.release.version)
    _eol(operator, "version", state.release_note)
    if state.namespace is not None:
        operator["namespace"] = _scalar(state.namespace)
        _eol(operator, "namespace", state.namespace_note)
    for section, keys in (
        ("cdi", (("enabled", "enabled"), ("default", "default"), ("nriPluginEnabled", "nriPluginEnabled"))),
        ("driver", (("enabled", "enabled"), ("version", "version"))),
        ("toolkit", (("enabled", "enabled"),)),
    ):
        block = CommentedMap()
        for key, alias in keys:
            setting = state.settings.get(f"{section}.{key}")
            if setting is None:
                continue
            block[alias] = _scalar(setting.value) if isinstance(setting.value, str) else setting.value
            _eol(block, alias, setting.origin)
        if section == "driver":
            upgrade = _upgrade_policy(state)
            if upgrade:
                block["upgradePolicy"] = upgrade
        if block:
            operator[section] = block
    if state.user_values:
        operator["valuesFiles"] = [user_values_file(cluster)]
        _eol(operator, "valuesFiles", "the release's other values, passed before gpustack-gen's")
    adopted = _adopted_configmaps(state)
    if adopted:
        operator["adoptFrom"] = adopted
        _eol(operator, "adoptFrom", "the ConfigMaps the Operator reads today; delete after the first rollout")
    return operator


def _device_plugin(state: PluginState) -> Any:
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    block = CommentedMap()
    if state.release is not None:
        block["version"] = DoubleQuotedScalarString(state.release.version)
        _eol(block, "version", state.release_note)
    if state.namespace is not None:
        block["namespace"] = _scalar(state.namespace)
        _eol(block, "namespace", state.namespace_note)
    if state.runtime_class is not None:
        block["runtimeClassName"] = _scalar(state.runtime_class)
        _eol(block, "runtimeClassName", state.runtime_class_note)
    if state.release_name not in (None, DEVICE_PLUGIN_RELEASE):
        block["releaseName"] = _scalar(state.release_name)
        _eol(block, "releaseName", state.release_name_note)
    return block


def _upgrade_policy(state: OperatorState) -> Any:
    """The driver upgrade controller's settings the release sets, under the fleet's names."""
    from ruamel.yaml.comments import CommentedMap

    block = CommentedMap()
    for key, (field_name, _) in UPGRADE_POLICY_MODELLED.items():
        setting = state.settings.get(key)
        if setting is not None:
            alias = to_camel(field_name)
            block[alias] = setting.value
            _eol(block, alias, setting.origin)
    return block


def _adopted_configmaps(state: OperatorState) -> Any:
    """The running Operator's own ConfigMaps: the first plan switches the ClusterPolicy off them before it labels
    nodes with gpustack-gen's keys."""
    from ruamel.yaml.comments import CommentedMap

    adopted = CommentedMap()
    for key, configmap, ours in (
        ("devicePluginConfig", state.plugin_configmap, DEVICE_PLUGIN_CONFIGMAP),
        ("migConfig", state.mig_configmap, MIG_PARTED_CONFIGMAP),
    ):
        if configmap is not None and configmap.name != ours:
            adopted[key] = _scalar(configmap.name)
    return adopted


def _pool(pool: PoolPlan, todos: Sequence[Todo]) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    group = pool.group
    products = sorted({n.labels.get("nvidia.com/gpu.product", "") for n in group.nodes})
    entry = CommentedMap()
    entry["name"] = _scalar(group.name)
    entry["gpu"] = _scalar(group.gpu.id if group.gpu is not None else group.product)
    _eol(entry, "gpu", "nvidia.com/gpu.product " + ", ".join(products))
    entry["nodes"] = len(group.nodes)
    _eol(entry, "nodes", _names(group.node_names))
    entry["gpusPerNode"] = group.gpus_per_node or 1
    _eol(entry, "gpusPerNode", "nvidia.com/gpu.count" if group.gpus_per_node else "assumed: no nvidia.com/gpu.count")
    entry["nodeSelector"] = _map(group.selector)
    _eol(
        entry,
        "nodeSelector",
        "the smallest set of labels these nodes share that selects no other node"
        if group.selector_exact
        else "a new label: no label set selects exactly these nodes",
    )
    if group.taints:
        taints = CommentedSeq()
        for key, value, effect in group.taints:
            taint: dict[str, Any] = {"key": key}
            if value is not None:
                taint["value"] = value
            taint["effect"] = effect
            taints.append(_map(taint))
        entry["taints"] = taints
        _eol(entry, "taints", "spec.taints shared by all these nodes")
    policy = pool.sharing.policy
    if policy is None:
        policy = {"strategy": "none"}
        notes = pool.sharing.notes or ("no device-plugin sharing and no MIG on these nodes",)
    else:
        notes = pool.sharing.notes
    sharing = CommentedMap()
    for key, value in policy.items():
        sharing[key] = _map(value) if isinstance(value, dict) else _scalar(value) if isinstance(value, str) else value
    entry["sharing"] = sharing
    _eol(entry, "sharing", "; ".join(notes))
    _before(entry, "gpu", todos, 8)
    return entry
