"""``import --check-roundtrip``: render the imported fleet and compare it with the inputs.

What is compared is what the fleet model owns, semantically:

- per GPU node, the device-plugin config that takes effect (parsed; ``flags.migStrategy`` is the
  Operator's ``mig.strategy`` because the Operator passes ``MIG_STRATEGY`` to the plugin; keys the plugin
  drops or resets, such as ``rename``, ``devices: all`` and top-level ``resources``, are ignored) and the
  MIG layout its ``nvidia.com/mig.config`` label selects; every GPU node must be selected by exactly one
  pool, and no pool may select a node without GPUs;
- the values keys the model owns (``cdi``, ``driver.enabled/version``, ``toolkit.enabled``,
  ``mig.strategy``), with the chart's defaults filled in on both sides; the Operator version where the
  inputs tell it; the namespace of the ConfigMaps;
- every other value the release has: the plan's ``helm upgrade`` (the user's values file, then gpustack-gen's)
  must pass it as it is (:mod:`.values_lost`).

Expected differences are listed apart and do not fail the check: gpustack-gen names its ConfigMaps
``gpustack-device-plugin-config`` / ``gpustack-mig-parted-config``, its device-plugin keys after their
content (``time-slicing-4``, ``whole-gpu`` as the default) and custom MIG configs ``custom-<layout>``, so
ConfigMap names, keys, ``devicePlugin.config`` / ``migManager.config`` and the node label values change
while what each node runs does not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..catalog import PRODUCT_LABEL, GpuModel, builtin_mig_config, get_gpu
from ..compile.artifact import DEVICE_PLUGIN_CONFIGMAP, DEVICE_PLUGIN_LABEL, MIG_CONFIG_LABEL, MIG_PARTED_CONFIGMAP
from ..errors import FleetError
from ..k8s_state import Node
from ..model.backends.gpu_operator import RESOURCE_GPU
from ..versions.gpu_operator import OperatorVersion
from .recover import (
    MIG_CONFIG_KEY,
    OWNED_KEYS,
    OperatorState,
    _normal,
    lookup,
    mig_entry,
    mig_name_of,
    parse_embedded,
    plugin_key_of,
)
from .values_lost import values_lost

if TYPE_CHECKING:
    from . import ImportResult

# The settings themselves; ConfigMap references are compared through the configs they name.
_COMPARED_VALUES = tuple(key for key in OWNED_KEYS if ".config." not in key)


@dataclass(frozen=True)
class RoundTripReport:
    differences: tuple[str, ...]  # what rendering the fleet would change in the cluster
    expected: tuple[str, ...]  # renames that change nothing the model owns

    @property
    def ok(self) -> bool:
        return not self.differences


@dataclass(frozen=True)
class _Rendered:
    values: dict[str, Any]
    plugin_data: dict[str, str] | None
    mig_data: dict[str, str] | None
    labels: dict[str, dict[str, str]]  # pool -> NVIDIA labels
    namespace: str | None


def check_roundtrip(result: ImportResult) -> RoundTripReport:
    """Render ``result.fleet_text`` and compare it with the inputs it was imported from."""
    from ..model import load_fleet
    from ..rendering import render

    try:
        fleet = load_fleet(result.fleet_text, name="fleet.yaml")
    except FleetError as exc:
        return RoundTripReport(
            tuple(f"the imported fleet does not validate: {p.path or 'file'}: {p.message}" for p in exc.errors), ()
        )
    cluster = fleet.clusters[0]
    bundle = render(fleet)
    rendered = _read_bundle({path: file.text for path, file in bundle.files.items()}, cluster.name)
    state = result.plan.state
    assert isinstance(state, OperatorState)  # a standalone release's is checked by .standalone_roundtrip
    differences: list[str] = []
    expected: list[str] = []

    release = cluster.operator.release
    if release.version != state.release.version:
        differences.append(f"GPU Operator version: inputs {state.release.version}, fleet {release.version}")
    for key in _COMPARED_VALUES:
        before = _effective_input(state, key, state.release)
        after = _effective(rendered.values, key, release)
        if before != after:
            differences.append(f"values {key}: inputs {_show(before)}, rendered {_show(after)}")
    if isinstance(result.inputs.values, Mapping):
        differences.extend(values_lost(result.inputs.values, state.user_values, rendered.values, state.accounted))
    if state.namespace is not None and rendered.namespace is not None and state.namespace != rendered.namespace:
        differences.append(f"namespace of the ConfigMaps: inputs {state.namespace}, rendered {rendered.namespace}")
    _config_renames(state, rendered, expected)

    pools = {pool.name: pool for pool in cluster.pools}
    per_node: dict[tuple[str, str], list[str]] = {}
    renames: dict[tuple[str, str], list[str]] = {}
    gpu_nodes = [n for n in result.inputs.nodes if n.labels.get(PRODUCT_LABEL)]
    for node in result.inputs.nodes:
        selecting = [p.name for p in cluster.pools if all(node.labels.get(k) == v for k, v in p.node_selector)]
        if node not in gpu_nodes:
            for name in selecting:
                per_node.setdefault((name, "its nodeSelector also selects nodes without GPUs"), []).append(node.name)
            continue
        if len(selecting) != 1:
            subject = f"pools {', '.join(selecting)}" if selecting else "no pool"
            message = "all select this GPU node" if selecting else "selects this GPU node: it would not be managed"
            per_node.setdefault((subject, message), []).append(node.name)
            continue
        pool_name = selecting[0]
        labels = rendered.labels.get(pool_name, {})
        gpu = get_gpu(node.labels[PRODUCT_LABEL])
        before = _input_plugin(node, state)
        after = _rendered_plugin(labels, rendered, cluster.mig_strategy)
        for message in _compare("device-plugin config", before, after):
            per_node.setdefault((pool_name, message), []).append(node.name)
        pool = pools[pool_name]
        if gpu is not None and gpu.mig_capable and pool.gpu.id == gpu.id:
            mig_before = _input_mig(node, state, gpu)
            mig_after = _rendered_mig(labels, rendered, gpu)
            if mig_before != mig_after:
                message = f"MIG: inputs {_show_mig(mig_before)}, rendered {_show_mig(mig_after)}"
                per_node.setdefault((pool_name, message), []).append(node.name)
        elif gpu is not None and pool.gpu.id != gpu.id:
            per_node.setdefault((pool_name, f"GPU model: node has {gpu.id}, pool has {pool.gpu.id}"), []).append(
                node.name
            )
        for label in (DEVICE_PLUGIN_LABEL, MIG_CONFIG_LABEL):
            now, then = node.labels.get(label), labels.get(label)
            if then is not None and now != then:
                renames.setdefault((pool_name, f"label {label}={then} (now {now or 'unset'})"), []).append(node.name)
    for (subject, message), names in per_node.items():
        where = f"pool {subject}" if not subject.startswith(("no pool", "pools ")) else subject
        differences.append(f"{where} ({_names(names)}): {message}")
    for (subject, message), names in renames.items():
        expected.append(f"pool {subject} ({_names(names)}): {message}")
    return RoundTripReport(tuple(differences), tuple(expected))


def _names(names: list[str]) -> str:
    shown = names[:5]
    return ", ".join(shown) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def _show(value: Any) -> str:
    return "unset" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _read_bundle(files: Mapping[str, str], cluster: str) -> _Rendered:
    from ..yamlio.load import load_plain

    def load(name: str) -> Any:
        text = files.get(f"{cluster}/{name}")
        return None if text is None else load_plain(text)

    values = load("gpu-operator-values.yaml") or {}
    plugin = load("device-plugin-config.yaml")
    mig = load("mig-parted-config.yaml")
    node_labels = load("node-labels.yaml") or {}
    labels = {p["name"]: dict(p.get("labels") or {}) for p in node_labels.get("pools", [])}
    namespace = None
    for document in (plugin, mig):
        if isinstance(document, dict):
            namespace = document.get("metadata", {}).get("namespace", namespace)
    return _Rendered(
        values=values,
        plugin_data=plugin.get("data") if isinstance(plugin, dict) else None,
        mig_data=mig.get("data") if isinstance(mig, dict) else None,
        labels=labels,
        namespace=namespace,
    )


def _chart_default(key: str, release: OperatorVersion) -> Any:
    return {
        "cdi.enabled": release.cdi_enabled_by_default,
        "cdi.default": False if release.has_cdi_default else None,
        "cdi.nriPluginEnabled": False if release.has_nri_plugin else None,
        "driver.enabled": True,
        "toolkit.enabled": True,
        "mig.strategy": "single",
    }.get(key)


def _effective_input(state: OperatorState, key: str, release: OperatorVersion) -> Any:
    setting = state.settings.get(key)
    return _chart_default(key, release) if setting is None else setting.value


def _effective(values: Mapping[str, Any], key: str, release: OperatorVersion) -> Any:
    found, value = lookup(values, key)
    return value if found else _chart_default(key, release)


def _config_renames(state: OperatorState, rendered: _Rendered, expected: list[str]) -> None:
    for key, name in (
        ("devicePlugin.config.name", DEVICE_PLUGIN_CONFIGMAP),
        ("devicePlugin.config.default", None),
        ("migManager.config.name", MIG_PARTED_CONFIGMAP),
        ("migManager.config.default", None),
    ):
        before = _normal(key, state.value(key))
        found, after = lookup(rendered.values, key)
        after = _normal(key, after if found else None)
        if before != after:
            expected.append(f"values {key}: {_show(before)} -> {_show(after)}")
        del name
    plugin = state.plugin_configmap
    if plugin is not None and rendered.plugin_data is not None and plugin.name != DEVICE_PLUGIN_CONFIGMAP:
        expected.append(
            f"{plugin.label} (keys {', '.join(plugin.data)}) -> ConfigMap {DEVICE_PLUGIN_CONFIGMAP} "
            f"(keys {', '.join(rendered.plugin_data)})"
        )
    mig = state.mig_configmap
    if mig is not None and rendered.mig_data is not None and mig.name != MIG_PARTED_CONFIGMAP:
        expected.append(f"{mig.label} -> ConfigMap {MIG_PARTED_CONFIGMAP}")


# --- device-plugin configs ---------------------------------------------------------------------------

_Canonical = dict[str, Any] | str  # flattened config, or a description of why there is none


def _input_plugin(node: Node, state: OperatorState) -> _Canonical:
    key = plugin_key_of(node.labels, state)
    cm = state.plugin_configmap
    if key is None:
        return canonical_plugin(None, state.mig_strategy)
    if cm is None:
        if state.value("devicePlugin.config.name"):
            return "unknown (its ConfigMap was not given)"
        return canonical_plugin(None, state.mig_strategy)
    if key not in cm.data:
        return f"missing (key {key} is not in {cm.label})"
    config, error = parse_embedded(cm.data[key])
    return f"invalid YAML in key {key}" if error is not None else canonical_plugin(config, state.mig_strategy)


def _rendered_plugin(labels: Mapping[str, str], rendered: _Rendered, mig_strategy: str) -> _Canonical:
    data = rendered.plugin_data
    if data is None:
        return canonical_plugin(None, mig_strategy)
    _, default = lookup(rendered.values, "devicePlugin.config.default")
    key = labels.get(DEVICE_PLUGIN_LABEL) or default
    if not isinstance(key, str) or key not in data:
        return f"missing (key {key})"
    config, error = parse_embedded(data[key])
    return f"invalid YAML in key {key}" if error is not None else canonical_plugin(config, mig_strategy)


def canonical_plugin(config: Any, mig_strategy: str) -> _Canonical:
    """What a device-plugin config does under the Operator, flattened to ``path: value``."""
    flat: dict[str, Any] = {"flags.migStrategy": mig_strategy}
    if config is None:
        return flat
    if not isinstance(config, dict):
        return "not a mapping"
    body = {k: v for k, v in config.items() if k not in ("version", "resources")}
    flags = body.get("flags")
    if isinstance(flags, dict):
        body["flags"] = {k: v for k, v in flags.items() if k != "migStrategy"}
    sharing = body.get("sharing")
    if isinstance(sharing, dict):
        mps = sharing.get("mps")
        chosen = "mps" if isinstance(mps, dict) and mps.get("resources") else "timeSlicing"
        block = sharing.get(chosen)
        rest = {k: v for k, v in sharing.items() if k not in ("mps", "timeSlicing")}
        if isinstance(block, dict) and block.get("resources"):
            block = dict(block)
            block.setdefault("renameByDefault", False)
            if chosen == "timeSlicing":
                block.setdefault("failRequestsGreaterThanOne", False)
            else:
                block.pop("failRequestsGreaterThanOne", None)
            resources = block.get("resources")
            if isinstance(resources, list):
                block["resources"] = [_canonical_resource(r) for r in resources]
            rest[chosen] = block
        body["sharing"] = rest
    _flatten(body, "", flat)
    return flat


def _canonical_resource(resource: Any) -> Any:
    if not isinstance(resource, dict):
        return resource
    result = {k: v for k, v in resource.items() if k not in ("rename", "devices") or (k == "devices" and v != "all")}
    name = result.get("name")
    if isinstance(name, str) and "/" not in name:
        result["name"] = f"nvidia.com/{name}"
    return result


def _flatten(data: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(data, dict) and data:
        for key, value in data.items():
            _flatten(value, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(data, dict):
        return
    elif isinstance(data, list):
        out[prefix] = repr(data)
    else:
        out[prefix] = data


def _compare(what: str, before: _Canonical, after: _Canonical) -> list[str]:
    if isinstance(before, str) or isinstance(after, str):
        if before == after:
            return []
        return [
            f"{what}: inputs {before if isinstance(before, str) else 'a config'}, rendered "
            f"{after if isinstance(after, str) else 'a config'}"
        ]
    messages = []
    for key in sorted(set(before) | set(after)):
        if before.get(key) != after.get(key):
            messages.append(f"{what} {key}: inputs {_show(before.get(key))}, rendered {_show(after.get(key))}")
    return messages


# --- MIG ---------------------------------------------------------------------------------------------

_Mig = tuple[Any, ...]


def _layout(kind: str, detail: Any) -> _Mig:
    if kind == "layout":
        return ("layout", tuple(sorted(detail.items())))
    if kind == "disabled":
        return ("disabled",)
    return (kind, str(detail) if detail is not None else "")


def _input_mig(node: Node, state: OperatorState, gpu: GpuModel) -> _Mig:
    name = mig_name_of(node.labels, state)
    if state.mig_configmap is not None:
        config, error = parse_embedded(state.mig_configmap.data.get(MIG_CONFIG_KEY, ""))
        if error is not None:
            return ("invalid",)
        kind, detail = mig_entry(config, name, gpu)
        return _layout(kind, name if kind == "missing" else detail)
    return _builtin(gpu, name)


def _builtin(gpu: GpuModel, name: str) -> _Mig:
    entry = builtin_mig_config(gpu, name)
    if entry is None:
        return ("missing", name)
    if not entry.mig_enabled:
        return ("disabled",)
    return ("layout", tuple(sorted(entry.mig_devices)))


def _rendered_mig(labels: Mapping[str, str], rendered: _Rendered, gpu: GpuModel) -> _Mig:
    name = labels.get(MIG_CONFIG_LABEL) or "all-disabled"
    if rendered.mig_data is not None:
        config, error = parse_embedded(rendered.mig_data.get(MIG_CONFIG_KEY, ""))
        if error is not None:
            return ("invalid",)
        kind, detail = mig_entry(config, name, gpu)
        return _layout(kind, name if kind == "missing" else detail)
    return _builtin(gpu, name)


def _show_mig(mig: _Mig) -> str:
    if mig[0] == "layout":
        return "{" + ", ".join(f"{p}: {c}" for p, c in mig[1]) + "}"
    if mig[0] == "disabled":
        return "MIG disabled"
    return " ".join(str(part) for part in mig if part)


__all__ = ["RESOURCE_GPU", "RoundTripReport", "canonical_plugin", "check_roundtrip"]
