"""``import --check-roundtrip`` for a standalone device plugin release: render the imported fleet (backend
``device-plugin``) and compare ``nvidia-device-plugin-values.yaml`` and ``node-labels.yaml`` with the inputs.

Compared as :mod:`.roundtrip` does for the Operator: per GPU node, the config that takes effect (parsed and
flattened by :func:`.roundtrip.canonical_plugin`; ``flags.migStrategy`` only on GPUs that have MIG, since the
plugin ignores it elsewhere), every GPU node selected by exactly one pool; the chart version, the namespace and
``runtimeClassName``; every other value the release sets (:func:`.standalone.values_not_kept`). gpustack-gen keys
the configs by pool (and ``any``, the default), so the keys and the node labels naming them are expected renames.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..catalog import PRODUCT_LABEL, get_gpu
from ..compile.artifact import DEVICE_PLUGIN_LABEL
from ..compile.backends.device_plugin.values import VALUES_FILE
from ..errors import FleetError
from ..k8s_state import Node
from ..model.backends.device_plugin import device_plugin_options
from .recover import lookup, parse_embedded, plugin_key_of
from .roundtrip import RoundTripReport, _compare, _names, canonical_plugin
from .standalone import PluginState, values_not_kept

if TYPE_CHECKING:
    from . import ImportResult


def _render(text: str) -> tuple[Any, dict[str, str]] | None:
    from ..model import load_fleet
    from ..rendering import render

    try:
        fleet = load_fleet(text, name="fleet.yaml")
    except FleetError:
        return None
    bundle = render(fleet)
    return fleet.clusters[0], {path: file.text for path, file in bundle.files.items()}


def _load(files: Mapping[str, str], cluster: str, name: str) -> Any:
    from ..yamlio.load import load_plain

    text = files.get(f"{cluster}/{name}")
    return None if text is None else load_plain(text)


def rendered_values(fleet_text: str) -> dict[str, Any] | None:
    """The chart values the fleet renders; None when it does not validate (its TODOs say why)."""
    rendered = _render(fleet_text)
    if rendered is None:
        return None
    cluster, files = rendered
    values = _load(files, cluster.name, VALUES_FILE)
    return values if isinstance(values, dict) else {}


def _effective(config: Any, chart_strategy: str, mig: bool) -> Any:
    """What a config does on a node: its own flags.migStrategy, else the chart's; dropped where the GPU has no MIG."""
    flags = config.get("flags") if isinstance(config, dict) else None
    own = flags.get("migStrategy") if isinstance(flags, dict) else None
    flat = canonical_plugin(config, own if isinstance(own, str) and own else chart_strategy)
    if isinstance(flat, dict) and not mig:
        flat.pop("flags.migStrategy", None)
    return flat


def _config(data: Mapping[str, str] | None, key: str | None, chart_strategy: str, mig: bool, where: str) -> Any:
    if data is None or key is None:
        return _effective(None, chart_strategy, mig)
    if key not in data:
        return f"missing (key {key} is not in {where})"
    config, error = parse_embedded(data[key])
    return f"invalid YAML in key {key}" if error is not None else _effective(config, chart_strategy, mig)


def _rendered_default(values: Mapping[str, Any]) -> str | None:
    found, default = lookup(values, "config.default")
    return default if found and isinstance(default, str) else None


def check_standalone_roundtrip(result: ImportResult) -> RoundTripReport:
    state = result.plan.state
    assert isinstance(state, PluginState)
    rendered = _render(result.fleet_text)
    if rendered is None:
        from ..model import load_fleet

        try:
            load_fleet(result.fleet_text, name="fleet.yaml")
        except FleetError as exc:
            return RoundTripReport(
                tuple(f"the imported fleet does not validate: {p.path or 'file'}: {p.message}" for p in exc.errors), ()
            )
    assert rendered is not None
    cluster, files = rendered
    values = _load(files, cluster.name, VALUES_FILE) or {}
    node_labels = _load(files, cluster.name, "node-labels.yaml") or {}
    labels = {p["name"]: dict(p.get("labels") or {}) for p in node_labels.get("pools", [])}
    options = device_plugin_options(cluster)
    differences: list[str] = []
    expected: list[str] = []
    if state.release is not None and state.release.version != options.release.version:
        differences.append(f"chart version: inputs {state.release.version}, fleet {options.release.version}")
    if state.namespace is not None and state.namespace != options.namespace:
        differences.append(f"namespace: inputs {state.namespace}, fleet {options.namespace}")
    if state.runtime_class != options.runtime_class_name:
        differences.append(f"runtimeClassName: inputs {state.runtime_class}, fleet {options.runtime_class_name}")
    differences.extend(values_not_kept(result.inputs.values, values))

    found, rendered_map = lookup(values, "config.map")
    rendered_data = rendered_map if found and isinstance(rendered_map, dict) else None
    cm = state.plugin_configmap
    if cm is not None and rendered_data is not None and set(cm.data) != set(rendered_data):
        expected.append(f"{cm.label} (keys {', '.join(cm.data)}) -> config.map (keys {', '.join(rendered_data)})")
    default = _rendered_default(values)
    if state.plugin_default != default:
        expected.append(f"config.default: {state.plugin_default or 'unset'} -> {default or 'unset'}")
    per_node: dict[tuple[str, str], list[str]] = {}
    renames: dict[tuple[str, str], list[str]] = {}
    for node in result.inputs.nodes:
        selecting = [p.name for p in cluster.pools if all(node.labels.get(k) == v for k, v in p.node_selector)]
        if not node.labels.get(PRODUCT_LABEL):
            for name in selecting:
                per_node.setdefault((f"pool {name}", "its nodeSelector also selects nodes without GPUs"), []).append(
                    node.name
                )
            continue
        if len(selecting) != 1:
            subject = f"pools {', '.join(selecting)}" if selecting else "no pool"
            message = "all select this GPU node" if selecting else "selects this GPU node: it would not be managed"
            per_node.setdefault((subject, message), []).append(node.name)
            continue
        pool = selecting[0]
        gpu = get_gpu(node.labels[PRODUCT_LABEL])
        mig = gpu is not None and gpu.mig_capable
        before = _input(node, state, mig)
        ours = labels.get(pool, {})
        after = _config(rendered_data, ours.get(DEVICE_PLUGIN_LABEL) or default, "none", mig, "config.map")
        for message in _compare("device-plugin config", before, after):
            per_node.setdefault((f"pool {pool}", message), []).append(node.name)
        now, then = node.labels.get(DEVICE_PLUGIN_LABEL), ours.get(DEVICE_PLUGIN_LABEL)
        if then is not None and now != then:
            renames.setdefault((pool, f"label {DEVICE_PLUGIN_LABEL}={then} (now {now or 'unset'})"), []).append(
                node.name
            )
    for (subject, message), names in per_node.items():
        differences.append(f"{subject} ({_names(names)}): {message}")
    for (pool, message), names in renames.items():
        expected.append(f"pool {pool} ({_names(names)}): {message}")
    return RoundTripReport(tuple(differences), tuple(expected))


def _input(node: Node, state: PluginState, mig: bool) -> Any:
    cm = state.plugin_configmap
    key = plugin_key_of(node.labels, state)
    return _config(cm.data if cm is not None else None, key, state.mig_strategy, mig, cm.label if cm else "")


__all__ = ["check_standalone_roundtrip", "rendered_values"]
