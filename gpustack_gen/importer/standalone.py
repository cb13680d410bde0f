"""Import from a standalone NVIDIA device plugin release (chart ``nvidia-device-plugin``, backend ``device-plugin``).

The inputs are the same as the Operator's (``helm get values``, ConfigMaps, nodes) plus, optionally, the chart's
DaemonSets or pods, whose ``helm.sh/chart`` label or image tag names the chart version. Which chart made the
inputs is told by their shape: the values keys only the standalone chart has (``config.map``, ``migStrategy``,
``deviceListStrategy``...), and objects labelled ``app.kubernetes.io/name: nvidia-device-plugin``. The pools and
their sharing are recovered as for the Operator (:func:`.recover.recover_sharing`); the chart has no MIG manager,
so no node is partitioned. What the fleet model cannot say is a TODO, and a value it does not model is a TODO
unless rendering the fleet gives the same (:func:`values_not_kept`).

Facts and line numbers: ``../shared/research/standalone-plugin.md`` §1 (chart v0.17.4 and v0.20.0).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from ..errors import FleetError, Problem
from ..k8s_state import ConfigMap, Where
from ..model.names import explain_dns_label
from ..versions import VersionTuple, find_release, format_version, leading_version, parse_version
from ..versions.device_plugin import (
    DEVICE_PLUGIN_CHART,
    DEVICE_PLUGIN_VERSIONS,
    NEWEST_DEVICE_PLUGIN,
    DevicePluginVersion,
    device_plugin_version_names,
)
from .inputs import VALUES_KEYS as OPERATOR_VALUES_KEYS
from .inputs import ChartObject, Inputs
from .notes import CLUSTER, Todo, one_line
from .recover import is_plugin_config, lookup, parse_embedded, short_value

CHART_LABEL = "helm.sh/chart"
INSTANCE_LABEL = "app.kubernetes.io/instance"  # the release's name, on every object of the chart (_helpers.tpl:61-79)
NAME_LABEL = "app.kubernetes.io/name"  # the chart's selector label, on all three DaemonSets (_helpers.tpl:61-79)
_CHART_PREFIX = f"{DEVICE_PLUGIN_CHART}-"
_IMAGE = "/k8s-device-plugin"  # nvcr.io/nvidia/k8s-device-plugin:v<appVersion> (values.yaml image.repository)
_PLUGIN_CONTAINER = "nvidia-device-plugin-ctr"
# The chart's ConfigMap from config.map is <fullname>-configs (_helpers.tpl:237-248).
_CHART_CONFIGMAP_SUFFIX = f"{DEVICE_PLUGIN_CHART}-configs"
# The config-manager's fallbacks when a node has no label and config.default is unset: the chart passes
# FALLBACK_STRATEGIES=named,single (a key named "default", else the only key).
_NAMED_FALLBACK = "default"
DEVICE_PLUGIN = "devicePlugin"  # where the chart's TODOs go in the fleet file
# Values the fleet models (the configs, the default, the runtime class); the rest are compared with the render.
_MODELLED = ("config.map", "config.name", "config.default", "runtimeClassName")


# Top-level keys of the chart's values.yaml that the GPU Operator chart does not have: how its values are told
# apart (k8s-device-plugin-v0.17.4-helm-values.yaml:20-100; the Operator's share devicePlugin, gfd, nfd, mps, cdi).
CHART_ONLY_KEYS = frozenset(
    {
        "config",
        "legacyDaemonsetAPI",
        "compatWithCPUManager",
        "migStrategy",
        "failOnInitError",
        "deviceListStrategy",
        "deviceIDStrategy",
        "nvidiaDriverRoot",
        "gdsEnabled",
        "mofedEnabled",
        "deviceDiscoveryStrategy",
        "nameOverride",
        "fullnameOverride",
        "namespaceOverride",
        "selectorLabelsOverride",
        "allowDefaultNamespace",
        "image",
        "updateStrategy",
        "podAnnotations",
        "podSecurityContext",
        "securityContext",
        "resources",
        "nodeSelector",
        "affinity",
        "tolerations",
        "priorityClassName",
        "runtimeClassName",
    }
)


def is_standalone(inputs: Inputs) -> bool:
    """Whether the inputs are the standalone chart's: its own values keys, or its objects; never with a ClusterPolicy."""
    if inputs.clusterpolicy is not None:
        return False
    if any(_is_chart_object(obj) for obj in inputs.workloads):
        return True
    if not isinstance(inputs.values, dict) or not inputs.values:
        return False
    keys = set(inputs.values)
    return bool(keys & CHART_ONLY_KEYS) and not keys & OPERATOR_VALUES_KEYS - {
        "devicePlugin",
        "gfd",
        "nfd",
        "mps",
        "cdi",
    }


def _is_chart_object(obj: ChartObject) -> bool:
    return obj.labels.get(NAME_LABEL) == DEVICE_PLUGIN_CHART or obj.labels.get(CHART_LABEL, "").startswith(
        _CHART_PREFIX
    )


@dataclass(frozen=True)
class PluginState:
    """What the standalone release runs, recovered from the inputs."""

    release: DevicePluginVersion | None  # None: no input tells it (a TODO)
    release_note: str
    namespace: str | None
    namespace_note: str
    runtime_class: str | None
    runtime_class_note: str
    release_name: str | None  # None: no input tells it (a TODO; the fleet's default, nvdp, is rendered)
    release_name_note: str
    plugin_configmap: ConfigMap | None
    plugin_default: str | None
    default_note: str
    todos: tuple[Todo, ...]
    warnings: tuple[str, ...] = ()
    mig_configmap: ConfigMap | None = None  # the chart has no MIG manager
    mig_default: str = "all-disabled"
    mig_strategy: str = "none"  # the chart's migStrategy value (configs may set their own)
    user_values: dict[str, Any] = field(default_factory=dict)  # the fleet passes none through


def _refuse(file: str, line: int, column: int, path: str, message: str, hint: str = "") -> NoReturn:
    raise FleetError([Problem(file, line, column, path, message, hint)])


# --- the chart version -------------------------------------------------------------------------------


def _version_evidence(inputs: Inputs) -> Iterator[tuple[VersionTuple, str, ChartObject]]:
    for obj in inputs.workloads:
        if not _is_chart_object(obj):
            continue
        chart = obj.labels.get(CHART_LABEL, "")
        if chart.startswith(_CHART_PREFIX) and (version := parse_version(chart.removeprefix(_CHART_PREFIX))):
            yield version, f"{obj.where} {obj.kind} {obj.name} label {CHART_LABEL}={chart}", obj
        for container, image in obj.images:
            repository, _, tag = image.rpartition(":")
            if container == _PLUGIN_CONTAINER and repository.endswith(_IMAGE) and (version := leading_version(tag)):
                yield version, f"{obj.where} {obj.kind} {obj.name} image {image}", obj


def _release(inputs: Inputs) -> tuple[DevicePluginVersion | None, str, list[Todo]]:
    """The chart version the inputs name; refused where they name several or one gpustack-gen does not know,
    a TODO where none does (the fleet then renders the newest known, which the TODO says)."""
    named: dict[VersionTuple, list[tuple[str, ChartObject]]] = {}
    for version, origin, obj in _version_evidence(inputs):
        named.setdefault(version, []).append((origin, obj))
    known = ", ".join(device_plugin_version_names())
    if len(named) > 1:
        listed = "; ".join(f"{format_version(v).lstrip('v')} ({origins[0][0]})" for v, origins in named.items())
        first = next(iter(named.values()))[0][1]
        _refuse(
            first.where.file,
            first.where.line,
            1 if first.where.line else 0,
            "",
            f"the inputs name different nvidia-device-plugin chart versions: {listed}",
            "finish the rollout that is under way (or pass the DaemonSets of one release), then import again",
        )
    if not named:
        return (
            None,
            "",
            [
                Todo(
                    "no input tells the nvidia-device-plugin chart version (pass --daemonsets with kubectl get "
                    "daemonset -A -o json: its helm.sh/chart label, or `helm list -A`); set devicePlugin.version "
                    f"to one of {known} (unset, the newest, {NEWEST_DEVICE_PLUGIN.version}, is rendered)",
                    DEVICE_PLUGIN,
                )
            ],
        )
    ((version, origins),) = named.items()
    release = find_release(format_version(version), DEVICE_PLUGIN_VERSIONS)
    text = format_version(version).lstrip("v")
    if release is None:
        obj = origins[0][1]
        _refuse(
            obj.where.file,
            obj.where.line,
            1 if obj.where.line else 0,
            "",
            f"nvidia-device-plugin chart {text} ({origins[0][0]}) is not a version gpustack-gen knows; known: {known}",
            "upgrade the release to a known version first, or import and set devicePlugin.version by hand",
        )
    return release, "; ".join(dict.fromkeys(o for o, _ in origins)), []


# --- the configs -------------------------------------------------------------------------------------


def _release_name(inputs: Inputs, todos: list[Todo]) -> tuple[str | None, str]:
    """The Helm release's name: its objects' instance label, else the plugin DaemonSet's or the chart's ConfigMap's
    name (``<release>-nvidia-device-plugin[-configs]``, ``_helpers.tpl:14-25,237-248``). Rendering another name would
    install a second release, a second plugin on every node: never guessed."""
    named: dict[str, str] = {}
    for obj in inputs.workloads:
        if not _is_chart_object(obj):
            continue
        if obj.labels.get(INSTANCE_LABEL):
            named.setdefault(obj.labels[INSTANCE_LABEL], f"{obj.where} {obj.kind} {obj.name} label {INSTANCE_LABEL}")
        elif obj.kind == "DaemonSet" and any(container == _PLUGIN_CONTAINER for container, _ in obj.images):
            release = obj.name.removesuffix(f"-{DEVICE_PLUGIN_CHART}")
            named.setdefault(release, f"{obj.where} DaemonSet {obj.name}")
    for cm in inputs.configmaps:
        if cm.name.endswith(_CHART_CONFIGMAP_SUFFIX):
            release = cm.name.removesuffix("-configs").removesuffix(f"-{DEVICE_PLUGIN_CHART}")
            named.setdefault(release, f"the name of {cm.label}")
    if len(named) > 1:
        todos.append(
            Todo(
                f"the inputs name several releases of the chart ({', '.join(sorted(named))}): set "
                "devicePlugin.releaseName to the one this cluster keeps, and uninstall the others (each runs a plugin "
                "on every node)",
                DEVICE_PLUGIN,
            )
        )
        return None, ""
    if not named:
        todos.append(
            Todo(
                "no input tells the release's name (pass --daemonsets); nvdp is rendered: if yours is another, set "
                "devicePlugin.releaseName, or the printed install adds a second plugin on every node",
                DEVICE_PLUGIN,
            )
        )
        return None, ""
    ((release, origin),) = named.items()
    if explain_dns_label(release) is not None:
        todos.append(Todo(f"release name {one_line(release)} ({origin}) is not a name the fleet takes", DEVICE_PLUGIN))
        return None, ""
    return release, origin


def _configmap(inputs: Inputs, todos: list[Todo]) -> tuple[ConfigMap | None, list[ConfigMap]]:
    """The ConfigMap the plugin reads (config.name's, or the one the chart makes from config.map) and the others."""
    values = inputs.values if isinstance(inputs.values, dict) else {}
    has_name, name = lookup(values, "config.name")
    has_map, data = lookup(values, "config.map")
    name = name if has_name and name else None
    data = data if has_map and data else None
    if name is not None and data is not None:
        file, line, column = inputs.values_line(("config", "name"))
        # The chart refuses to install with both (validation.yml:36-42): these are not a release's values.
        _refuse(file, line, column, "config.name", "config.name and config.map are both set; the chart allows one")
    given = list(inputs.configmaps)
    if name is not None:
        found = next((cm for cm in given if cm.name == str(name)), None)
        if found is None:
            file, line, column = inputs.values_line(("config", "name"))
            _refuse(
                file,
                line,
                column,
                "config.name",
                f"config.name names ConfigMap {name}, which was not given: without it the pools' sharing is unknown",
                f"pass it with --configmap (kubectl get configmap -n <namespace> {name} -o json)",
            )
        return found, [cm for cm in given if cm is not found]
    if data is None:
        return None, given
    file, line, _ = inputs.values_line(("config", "map"))
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        _refuse(file, line, 1, "config.map", "config.map must map config names to config files (strings)")
    from_values = ConfigMap("", None, dict(data), Where(file, line), origin=f"config.map in {file}")
    chart_made = [cm for cm in given if cm.name.endswith(_CHART_CONFIGMAP_SUFFIX)]
    for cm in chart_made:
        if cm.data != from_values.data:
            todos.append(Todo(f"{cm.label} differs from config.map; took config.map (what the next upgrade installs)"))
    return from_values, [cm for cm in given if cm not in chart_made]


def _config_line(inputs: Inputs, cm: ConfigMap, key: str) -> tuple[str, int, int, str]:
    if cm.origin.startswith("config.map"):
        file, line, column = inputs.values_line(("config", "map", key))
        return file, line, column, f"config.map.{key}"
    return cm.where.file, cm.where.line, 1 if cm.where.line else 0, f"data.{key}"


def refusal(config: Any) -> str | None:
    """Why the plugin would refuse a config file, or None (api/config/v1: ``../shared/research/device-plugin-mig.md``
    "Validation rules"): an unknown version, a sharing block without resources, a resource without a name, or
    replicas that are not an integer of at least 2."""
    if not isinstance(config, dict):
        return "it is not a mapping"
    version = config.get("version")
    if version not in (None, "", "v1"):
        return f"unknown version: {one_line(str(version))}"
    sharing = config.get("sharing")
    for strategy in ("timeSlicing", "mps"):
        block = sharing.get(strategy) if isinstance(sharing, dict) else None
        if block is None:
            continue
        resources = block.get("resources") if isinstance(block, dict) else None
        if not isinstance(resources, list) or not resources:
            return f"sharing.{strategy}: no resources specified"
        for index, resource in enumerate(resources):
            where = f"sharing.{strategy}.resources[{index}]"
            if not isinstance(resource, dict) or not resource.get("name"):
                return f"{where}: no resource name specified"
            replicas = resource.get("replicas")
            if replicas is None:
                return f"{where}: no replicas specified"
            if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 2:
                return f"{where}.replicas {one_line(str(replicas))}: number of replicas must be >= 2"
    return None


def _check_configs(inputs: Inputs, cm: ConfigMap) -> None:
    problems = []
    for key, text in cm.data.items():
        file, line, column, path = _config_line(inputs, cm, key)
        config, error = parse_embedded(text)
        reason = f"not valid YAML ({error})" if error is not None else refusal(config)
        if reason is not None:
            problems.append(
                Problem(
                    file,
                    line,
                    column,
                    path,
                    f"the device plugin would refuse config {key}: {reason}",
                    "fix it in the cluster first (the plugin pods on nodes using it cannot start), then import",
                )
            )
    if problems:
        raise FleetError(problems)


def _default(inputs: Inputs, cm: ConfigMap | None) -> tuple[str | None, str, list[Todo]]:
    found, default = lookup(inputs.values, "config.default")
    if found and isinstance(default, str) and default:
        if cm is not None and default not in cm.data:
            return default, "config.default", [Todo(f"config.default {default} is not a key of {cm.label}")]
        return default, "config.default", []
    if cm is None:
        return None, "", []
    if _NAMED_FALLBACK in cm.data:
        return _NAMED_FALLBACK, f"the key named {_NAMED_FALLBACK} (the chart's fallback)", []
    if len(cm.data) == 1:
        (only,) = cm.data
        return only, f"the only key of {cm.label} (the chart's fallback)", []
    return None, "", []


# --- the release -------------------------------------------------------------------------------------


def recover_plugin(inputs: Inputs) -> PluginState:
    todos: list[Todo] = []
    release, release_note, release_todos = _release(inputs)
    todos.extend(release_todos)
    cm, others = _configmap(inputs, todos)
    if cm is not None:
        _check_configs(inputs, cm)
    for other in others:
        holds = any(is_plugin_config(parse_embedded(text)[0]) for text in other.data.values())
        what = "holds device-plugin configs but the release does not use it" if holds else "is not the release's"
        todos.append(Todo(f"{other.label} {what}; not imported"))
    default, default_note, default_todos = _default(inputs, cm)
    todos.extend(default_todos)
    release_name, release_name_note = _release_name(inputs, todos)

    namespace, namespace_note = None, ""
    spaces: dict[str, str] = {}
    found, override = lookup(inputs.values, "namespaceOverride")
    if found and isinstance(override, str) and override:
        spaces.setdefault(override, f"{inputs.values_file} namespaceOverride")
    for obj in inputs.workloads:
        if _is_chart_object(obj) and obj.namespace:
            spaces.setdefault(obj.namespace, f"metadata.namespace of {obj.kind} {obj.name}")
    for given in inputs.configmaps:
        if given is cm and given.namespace:
            spaces.setdefault(given.namespace, f"metadata.namespace of {given.label}")
    if len(spaces) > 1:
        todos.append(
            Todo(f"the release's objects are in namespaces {', '.join(spaces)}; took the first", DEVICE_PLUGIN)
        )
    if spaces:
        namespace, namespace_note = next(iter(spaces.items()))
    else:
        todos.append(
            Todo(
                "no input tells the release's namespace (pass --daemonsets); left to the default, nvidia-device-plugin",
                DEVICE_PLUGIN,
            )
        )

    runtime_class, runtime_note = None, ""
    found, value = lookup(inputs.values, "runtimeClassName")
    if found and value is not None:
        if isinstance(value, str) and explain_dns_label(value) is None:
            runtime_class, runtime_note = value, f"{inputs.values_file} runtimeClassName"
        else:
            todos.append(Todo(f"runtimeClassName {one_line(str(value))} is not a RuntimeClass name; not imported"))
    found, strategy = lookup(inputs.values, "migStrategy")
    mig_strategy = strategy if found and isinstance(strategy, str) and strategy else "none"
    if mig_strategy != "none":
        todos.append(
            Todo(f"migStrategy {one_line(mig_strategy)}: the chart has no MIG manager, the fleet renders none", CLUSTER)
        )
    return PluginState(
        release=release,
        release_note=release_note,
        namespace=namespace,
        namespace_note=namespace_note,
        runtime_class=runtime_class,
        runtime_class_note=runtime_note,
        release_name=release_name,
        release_name_note=release_name_note,
        plugin_configmap=cm,
        plugin_default=default,
        default_note=default_note,
        todos=tuple(todos),
        mig_strategy=mig_strategy,
    )


# --- what the fleet renders --------------------------------------------------------------------------


def _leaves(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in data.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            yield from _leaves(value, f"{path}.")
        else:
            yield path, value


def values_not_kept(release: Mapping[str, Any] | None, rendered: Mapping[str, Any]) -> Iterator[str]:
    """One line per value the release sets that the fleet neither models nor renders the same (Helm replaces a
    release's values with the files an upgrade passes, so those go back to the chart's default)."""
    for key, value in _leaves(release or {}):
        if value is None or any(key == m or key.startswith(f"{m}.") for m in _MODELLED):
            continue
        found, ours = lookup(rendered, key)
        if not found or ours != value:
            shown = "nothing" if not found else short_value(ours)
            yield f"values {key}: the release has {short_value(value)}, the fleet renders {shown}"


__all__ = ["PluginState", "is_standalone", "recover_plugin", "refusal", "values_not_kept"]
