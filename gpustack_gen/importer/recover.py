"""Recover the Operator settings and each pool's sharing from values, the ClusterPolicy and ConfigMaps.

Precedence: the ClusterPolicy is what runs, so it wins over the values file where both set a key (the
conflict is a TODO). Keys neither sets are left to the chart default, which is also the fleet model's.
Each device-plugin config key becomes a sharing policy (time-slicing / MPS, replicas, renameByDefault,
failRequestsGreaterThanOne); each mig-parted config becomes a ``layout``, or ``config: <name>`` where it
is one of the Operator's built-in configs for that GPU, unchanged. Whatever the fleet model cannot say
is listed as a TODO, never dropped silently.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn, Protocol

from ..catalog import GpuModel, builtin_mig_config, builtin_mig_config_names
from ..compile.artifact import DEVICE_PLUGIN_LABEL, MIG_CONFIG_LABEL
from ..compile.backends.gpu_operator import MPS_ROOT
from ..compile.operator import driver_upgrade_policy
from ..errors import FleetError, Problem
from ..helm_values import MERGED_LISTS
from ..k8s_state import ConfigMap, Where
from ..model.backends.gpu_operator import RESOURCE_GPU
from ..model.fleet import DriverUpgrade
from ..validate.operator_keys import VALUES_KEYS
from ..versions import VersionTuple, format_version, leading_version, parse_version
from ..versions.gpu_operator import (
    OPERATOR_VERSIONS,
    OperatorVersion,
    UnknownOperatorVersion,
    get_operator_version,
    operator_version_names,
    require_operator_version,
)
from .discover import NodeGroup
from .inputs import Inputs
from .notes import OPERATOR, Todo, one_line, pool_place

DEFAULT_MIG_CONFIGMAP = "default-mig-parted-config"
MIG_CONFIG_KEY = "config.yaml"
MIG_STRATEGY_LABEL = "nvidia.com/mig.strategy"

# Operands the fleet model relies on: ``enabled: true`` is what it assumes, so it is not a TODO.
_REQUIRED_OPERANDS = ("devicePlugin.enabled", "gfd.enabled", "migManager.enabled", "nfd.enabled")
# Written by backend dra only (the driver manager evicts the DRA kubelet plugin): an imported cluster runs the
# Operator's device plugin, so a value there stays a TODO.
_OTHER_BACKENDS_KEYS = ("driver.manager.env",)
# The driver upgrade controller's keys gpustack-gen renders and passes last (docs/guides/rollout-assumptions.md);
# those the fleet models are recovered (values key -> fleet key, type), the others stay a TODO where they differ.
_UPGRADE_POLICY_KEYS = tuple(gate.path for gate in VALUES_KEYS if gate.path.startswith("driver.upgradePolicy."))
UPGRADE_POLICY_MODELLED: dict[str, tuple[str, type]] = {
    "driver.upgradePolicy.maxParallelUpgrades": ("max_parallel_upgrades", int),
    "driver.upgradePolicy.gpuPodDeletion.deleteEmptyDir": ("delete_empty_dir", bool),
    "driver.upgradePolicy.gpuPodDeletion.force": ("force", bool),
}
# Values keys the fleet model owns (rendered into gpu-operator-values.yaml): the version-gate table, but for
# the operand switches an import requires on (only another device backend, such as HAMi, turns one off) and the
# operands' tolerations, which stay the user's (the fleet adds only what its pool taints need).
OWNED_KEYS = tuple(
    gate.path
    for gate in VALUES_KEYS
    if gate.path not in (*_REQUIRED_OPERANDS, *_OTHER_BACKENDS_KEYS, *_UPGRADE_POLICY_KEYS, *MERGED_LISTS)
)
# ClusterPolicy spec sections the model has a say in (the rest is listed as outside the model).
_POLICY_SECTIONS = frozenset({"cdi", "driver", "toolkit", "mig", "devicePlugin", "migManager"})


@dataclass(frozen=True)
class Setting:
    value: Any
    origin: str  # e.g. "values.yaml cdi.enabled"


@dataclass(frozen=True)
class OperatorState:
    """The cluster-wide settings recovered from the inputs."""

    settings: dict[str, Setting]  # owned key -> value set by an input (only those set)
    release: OperatorVersion
    release_note: str  # where the release came from
    namespace: str | None
    namespace_note: str
    mig_strategy: str  # effective: single | mixed (none is kept as "single" with a TODO)
    plugin_configmap: ConfigMap | None
    plugin_default: str | None
    mig_configmap: ConfigMap | None  # a custom mig-parted ConfigMap in use; None: the built-in configs
    mig_default: str
    todos: tuple[Todo, ...]
    warnings: tuple[str, ...]
    user_values: dict[str, Any] = field(default_factory=dict)  # outside the model: passed through as they are
    # values keys the fleet accounts for without passing them: settings it models, the release's own image
    # versions, operands on as the chart has them, values the Operator never reads
    accounted: frozenset[str] = frozenset()

    def value(self, key: str, default: Any = None) -> Any:
        setting = self.settings.get(key)
        return default if setting is None else setting.value


class ConfigSource(Protocol):
    """Where a pool's device-plugin and mig-parted configs come from: the Operator's state, or the standalone
    chart's (which has no MIG manager: no mig-parted ConfigMap, every node all-disabled)."""

    @property
    def plugin_configmap(self) -> ConfigMap | None: ...
    @property
    def plugin_default(self) -> str | None: ...
    @property
    def mig_configmap(self) -> ConfigMap | None: ...
    @property
    def mig_default(self) -> str: ...


@dataclass(frozen=True)
class PoolSharing:
    """A pool's sharing policy in fleet-file form (aliases), or None for whole GPUs."""

    policy: dict[str, Any] | None
    notes: tuple[str, ...]
    todos: tuple[Todo, ...]
    plugin_key: str | None  # the device-plugin config key the pool's nodes use
    mig_name: str | None  # the mig-parted config name the pool's nodes use
    warnings: tuple[str, ...] = ()  # settings dropped because they have no effect upstream


# --- small helpers ---------------------------------------------------------------------------------


def lookup(data: Mapping[str, Any] | None, dotted: str) -> tuple[bool, Any]:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def parse_embedded(text: str) -> tuple[Any, str | None]:
    """A config file held in a ConfigMap value: (data, None) or (None, error message)."""
    from ruamel.yaml.error import YAMLError

    from ..yamlio.load import load_plain

    try:
        return load_plain(text), None
    except (YAMLError, ValueError, RecursionError) as exc:
        return None, " ".join(str(exc).split())[:200]


def is_plugin_config(data: Any) -> bool:
    return isinstance(data, dict) and data.get("version", "v1") in ("v1", "") and bool({"flags", "sharing"} & set(data))


def is_mig_config(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("mig-configs"), dict)


def _looks_like_plugin(cm: ConfigMap) -> bool:
    return bool(cm.data) and any(is_plugin_config(parse_embedded(text)[0]) for text in cm.data.values())


def _looks_like_mig(cm: ConfigMap) -> bool:
    return MIG_CONFIG_KEY in cm.data and is_mig_config(parse_embedded(cm.data[MIG_CONFIG_KEY])[0])


def _disagreement(key: str, values_name: str, from_values: Any, from_policy: Any) -> Todo:
    """The TODO of a key the values file and the running ClusterPolicy disagree on: the ClusterPolicy's is taken."""
    return Todo(
        f"{key}: {values_name} says {short_value(from_values)} but the ClusterPolicy says "
        f"{short_value(from_policy)}; took the ClusterPolicy's (what runs now)",
        OPERATOR,
    )


def short_value(value: Any) -> str:
    """A value as a TODO quotes it: one line, at most 60 characters."""
    text = one_line(value if isinstance(value, str) else json.dumps(value, sort_keys=False, default=str))
    return text if len(text) <= 60 else text[:57] + "..."


# --- cluster-wide settings -------------------------------------------------------------------------

# Values that mean the same as leaving the key unset.
_UNSET_EQUIVALENTS: dict[str, tuple[Any, ...]] = {
    "devicePlugin.config.name": ("",),
    "devicePlugin.config.default": ("",),
    "migManager.config.name": ("", DEFAULT_MIG_CONFIGMAP),
    "migManager.config.default": ("all-disabled",),
}


def _normal(key: str, value: Any) -> Any:
    """A setting with the values that mean "unset" folded into None."""
    return None if value is None or value in _UNSET_EQUIVALENTS.get(key, ()) else value


def recover_operator(inputs: Inputs, operator_version: str | None, groups: tuple[NodeGroup, ...]) -> OperatorState:
    todos: list[Todo] = []
    warnings: list[str] = []
    values_name = inputs.values_file or "values"
    policy_name = inputs.clusterpolicy_file or "ClusterPolicy"
    consumed: set[str] = set()

    settings: dict[str, Setting] = {}
    for key in OWNED_KEYS:
        in_values, from_values = lookup(inputs.values, key)
        in_policy, from_policy = lookup(inputs.clusterpolicy, key)
        if in_values:
            consumed.add(key)
        if in_policy and in_values and _normal(key, from_policy) != _normal(key, from_values):
            todos.append(_disagreement(key, values_name, from_values, from_policy))
        if in_policy and from_policy is not None:
            settings[key] = Setting(from_policy, f"{policy_name} spec.{key}")
        elif in_values and from_values is not None:
            settings[key] = Setting(from_values, f"{values_name} {key}")

    release, release_note, release_todos = _release(inputs, operator_version, consumed)
    todos.extend(release_todos)

    maps = list(inputs.configmaps)
    maps.extend(_configmaps_from_values(inputs, settings, consumed))
    plugin_cm, plugin_todos = _select_plugin_configmap(maps, settings, inputs, groups)
    mig_cm, mig_todos = _select_mig_configmap(maps, settings, inputs, groups)
    todos.extend(plugin_todos + mig_todos)
    for cm in maps:
        if cm is plugin_cm or cm is mig_cm:
            continue
        if _looks_like_plugin(cm):
            todos.append(Todo(f"{cm.label} holds device-plugin configs but the Operator does not use it; not imported"))
        elif _looks_like_mig(cm):
            todos.append(Todo(f"{cm.label} holds mig-parted configs but the Operator does not use it; not imported"))
        else:
            todos.append(Todo(f"{cm.label} is neither a device-plugin nor a mig-parted config; not imported"))

    namespace, namespace_note = None, ""
    spaces = sorted({cm.namespace for cm in (plugin_cm, mig_cm) if cm is not None and cm.namespace})
    if len(spaces) > 1:
        todos.append(Todo(f"the ConfigMaps are in namespaces {', '.join(spaces)}; took {spaces[0]}", OPERATOR))
    if spaces:
        namespace = spaces[0]
        namespace_note = "metadata.namespace of " + " and ".join(
            cm.label for cm in (plugin_cm, mig_cm) if cm is not None and cm.namespace == namespace
        )

    if "mig.strategy" not in settings and inputs.values is None and inputs.clusterpolicy is None:
        labelled = sorted(
            {n.labels[MIG_STRATEGY_LABEL] for g in groups for n in g.nodes if MIG_STRATEGY_LABEL in n.labels}
        )
        if len(labelled) == 1:
            settings["mig.strategy"] = Setting(
                labelled[0], f"node label {MIG_STRATEGY_LABEL} (set by GPU feature discovery)"
            )
        elif labelled:
            todos.append(
                Todo(f"the nodes are labelled {MIG_STRATEGY_LABEL} {', '.join(labelled)}; pass --values", OPERATOR)
            )
    mig_strategy = "single"
    strategy = settings.get("mig.strategy")
    if strategy is not None:
        if strategy.value in ("single", "mixed"):
            mig_strategy = strategy.value
        else:
            todos.append(
                Todo(
                    f"mig.strategy {short_value(strategy.value)} ({strategy.origin}) is not one the fleet model has "
                    "(single, mixed); left to the default, single",
                    OPERATOR,
                )
            )

    for key, label in (("cdi.default", "has_cdi_default"), ("cdi.nriPluginEnabled", "has_nri_plugin")):
        setting = settings.get(key)
        if setting is not None and not getattr(release, label):
            del settings[key]
            if setting.value:
                todos.append(
                    Todo(
                        f"{key}: {short_value(setting.value)} ({setting.origin}) has no effect in GPU Operator "
                        f"{release.version}; not imported",
                        OPERATOR,
                    )
                )
    for key in ("cdi.enabled", "cdi.default", "cdi.nriPluginEnabled", "driver.enabled", "toolkit.enabled"):
        setting = settings.get(key)
        if setting is not None and not isinstance(setting.value, bool):
            del settings[key]
            todos.append(Todo(f"{key}: {short_value(setting.value)} ({setting.origin}) is not a boolean", OPERATOR))
    version_setting = settings.get("driver.version")
    if version_setting is not None and (not isinstance(version_setting.value, str) or not version_setting.value):
        del settings["driver.version"]
        if version_setting.value not in ("", None):
            todos.append(
                Todo(
                    f"driver.version: {short_value(version_setting.value)} ({version_setting.origin}) is not a string "
                    "(YAML read a number: quote it); not imported",
                    OPERATOR,
                )
            )

    consumed.update(
        {"devicePlugin.config.create", "devicePlugin.config.data", "migManager.config.create", "migManager.config.data"}
    )
    for key in _REQUIRED_OPERANDS:
        found, enabled = lookup(inputs.values, key)
        if found and enabled is True:
            consumed.add(key)
    found, root = lookup(inputs.values, "devicePlugin.mps.root")
    if found and root == MPS_ROOT:
        consumed.add("devicePlugin.mps.root")
    upgrade = _recover_upgrade_policy(inputs, settings, todos)
    todos.extend(_upgrade_policy_not_kept(inputs, upgrade))
    accounted = frozenset(consumed)
    consumed.update(_UPGRADE_POLICY_KEYS)  # rendered and passed last: a user file cannot keep them
    user_values = _pass_through(inputs, consumed)
    todos.extend(_policy_outside_model(inputs))

    plugin_default = settings.get("devicePlugin.config.default")
    mig_default = settings.get("migManager.config.default")
    return OperatorState(
        settings=settings,
        release=release,
        release_note=release_note,
        namespace=namespace,
        namespace_note=namespace_note,
        mig_strategy=mig_strategy,
        plugin_configmap=plugin_cm,
        plugin_default=plugin_default.value if plugin_default is not None and plugin_default.value else None,
        mig_configmap=mig_cm,
        mig_default=mig_default.value if mig_default is not None and mig_default.value else "all-disabled",
        todos=tuple(todos),
        warnings=tuple(warnings),
        user_values=user_values,
        accounted=accounted,
    )


# Where the inputs name the GPU Operator release itself. Helm labels the ClusterPolicy with the chart
# (``helm.sh/chart: gpu-operator-v25.3.3``) and its appVersion (deployments/gpu-operator/templates/_helpers.tpl,
# "gpu-operator.labels"); the operator and validator images are tagged with the appVersion unless a values
# file pins another tag (values.yaml: "If version is not specified, then default is to use chart.AppVersion").
_CHART_LABEL = "helm.sh/chart"
_CHART_NAME = "gpu-operator-"
_APP_VERSION_LABEL = "app.kubernetes.io/version"
_RELEASE_KEYS = ("operator.version", "validator.version")
# Component images the chart pins: narrow the release down where nothing names it.
_COMPONENT_KEYS = (("devicePlugin.version", "device_plugin"), ("migManager.version", "mig_manager"))
_NO_VERSION_HINT = "pass --operator-version with the chart version the cluster runs (`helm list -A` shows it)"


def _release(inputs: Inputs, option: str | None, consumed: set[str]) -> tuple[OperatorVersion, str, list[Todo]]:
    """The GPU Operator release, where it came from, and a TODO when the inputs fit several releases.

    Raises :class:`FleetError` where the inputs do not tell it: a guess would silently up- or downgrade
    the Operator in the first pull request, and drop settings the guessed chart does not have.
    """
    todos: list[Todo] = []
    if option is not None:
        try:
            release, note = require_operator_version(option), "--operator-version"
        except UnknownOperatorVersion as unknown:
            raise FleetError([Problem("--operator-version", 0, 0, "", str(unknown), unknown.hint)]) from None
    else:
        release, note, todos = _named_release(inputs) or _release_of_components(inputs)
    _consume_matching(release, inputs, consumed)
    return release, note, todos


def _named_release(inputs: Inputs) -> tuple[OperatorVersion, str, list[Todo]] | None:
    """The release the inputs name outright, if they do; refused when they name several or an unknown one."""
    named: dict[VersionTuple, list[str]] = {}  # version -> where
    for version, origin in _release_evidence(inputs):
        named.setdefault(version, []).append(origin)
    if len(named) > 1:
        listed = "; ".join(f"{format_version(v)} ({', '.join(origins)})" for v, origins in named.items())
        _refuse(f"the inputs name different GPU Operator versions: {listed}", _NO_VERSION_HINT)
    if not named:
        return None
    ((version, origins),) = named.items()
    release = get_operator_version(format_version(version))
    if release is None:
        _refuse(
            f"GPU Operator {format_version(version)} ({', '.join(origins)}) is not a version gpustack-gen knows; "
            f"known: {', '.join(operator_version_names())}",
            "pass --operator-version with the known version whose settings the cluster should get",
        )
    return release, ", ".join(origins), []


def _release_of_components(inputs: Inputs) -> tuple[OperatorVersion, str, list[Todo]]:
    """The release whose device plugin and MIG manager the inputs pin; the newest verified one if several."""
    components = _component_evidence(inputs)
    if not components:
        _refuse(
            "no input tells the GPU Operator version (the ClusterPolicy's helm.sh/chart label, operator.version, "
            "validator.version, devicePlugin.version or migManager.version)",
            _NO_VERSION_HINT,
        )
    candidates = list(OPERATOR_VERSIONS)
    for component, version, _ in components:
        candidates = [r for r in candidates if getattr(r, component) == version]
    origins = ", ".join(origin for _, _, origin in components)
    if not candidates:
        _refuse(f"no GPU Operator version gpustack-gen knows ships {origins}", _NO_VERSION_HINT)
    release = ([r for r in candidates if r.verified] or candidates)[-1]
    note = f"{origins} ships with GPU Operator {release.version}"
    if len(candidates) == 1:
        return release, note, []
    names = " and ".join(r.version for r in candidates)
    todo = (
        f"{origins} ships with GPU Operator {names}; took {release.version}: pass --operator-version if it is another"
    )
    return release, note, [Todo(todo, OPERATOR)]


def _refuse(message: str, hint: str) -> NoReturn:
    raise FleetError([Problem("--operator-version", 0, 0, "", message, hint)])


def _sources(inputs: Inputs) -> tuple[tuple[Mapping[str, Any] | None, str, str], ...]:
    """(data, how messages name the file, key prefix) of the values file and the ClusterPolicy spec."""
    return (
        (inputs.values, inputs.values_file or "values", ""),
        (inputs.clusterpolicy, inputs.clusterpolicy_file or "ClusterPolicy", "spec."),
    )


def _release_evidence(inputs: Inputs) -> Iterator[tuple[VersionTuple, str]]:
    """Every place that names the release itself: (version, "where it says so")."""
    policy = inputs.clusterpolicy_file or "ClusterPolicy"
    chart = inputs.clusterpolicy_labels.get(_CHART_LABEL, "")
    if chart.startswith(_CHART_NAME) and (version := parse_version(chart.removeprefix(_CHART_NAME))) is not None:
        yield version, f"{policy} label {_CHART_LABEL}={chart}"
    app = inputs.clusterpolicy_labels.get(_APP_VERSION_LABEL, "")
    if (version := parse_version(app)) is not None:
        yield version, f"{policy} label {_APP_VERSION_LABEL}={app}"
    for data, name, prefix in _sources(inputs):
        for key in _RELEASE_KEYS:
            found, raw = lookup(data, key)
            if found and (version := leading_version(raw)) is not None:
                yield version, f"{name} {prefix}{key} {raw}"


def _component_evidence(inputs: Inputs) -> list[tuple[str, str, str]]:
    """(component, its version, "where") of each component image version the inputs pin."""
    found: dict[tuple[str, str, str, str], list[str]] = {}  # (component, version, key, raw) -> files
    for data, name, _ in _sources(inputs):
        for key, component in _COMPONENT_KEYS:
            present, raw = lookup(data, key)
            version = leading_version(raw) if present else None
            if version is not None:
                found.setdefault((component, format_version(version), key, str(raw)), []).append(name)
    return [
        (component, version, f"{key} {raw} ({', '.join(files)})")
        for (component, version, key, raw), files in found.items()
    ]


def _consume_matching(release: OperatorVersion, inputs: Inputs, consumed: set[str]) -> None:
    """Values that name the release's own image versions are accounted for by the chart version."""
    for key, component in (
        ("devicePlugin.version", "device_plugin"),
        ("gfd.version", "device_plugin"),
        ("migManager.version", "mig_manager"),
        ("operator.version", "version"),
        ("validator.version", "version"),
    ):
        found, raw = lookup(inputs.values, key)
        version = leading_version(raw) if found else None
        if version is not None and format_version(version) == getattr(release, component):
            consumed.add(key)


def _configmaps_from_values(inputs: Inputs, settings: dict[str, Setting], consumed: set[str]) -> list[ConfigMap]:
    """ConfigMaps the chart creates from ``devicePlugin.config.data`` / ``migManager.config.data``."""
    found: list[ConfigMap] = []
    where = Where(inputs.values_file or "values", 0)
    for section in ("devicePlugin", "migManager"):
        has_create, create = lookup(inputs.values, f"{section}.config.create")
        has_data, data = lookup(inputs.values, f"{section}.config.data")
        name = settings.get(f"{section}.config.name")
        if not (has_create and create is True and has_data and isinstance(data, dict) and data and name):
            continue
        if not all(isinstance(v, str) for v in data.values()):
            continue
        found.append(
            ConfigMap(str(name.value), None, dict(data), where, origin=f"{section}.config.data in {where.file}")
        )
    return found


def _named(maps: list[ConfigMap], name: str) -> ConfigMap | None:
    return next((cm for cm in maps if cm.name == name), None)


def _select_plugin_configmap(
    maps: list[ConfigMap], settings: dict[str, Setting], inputs: Inputs, groups: tuple[NodeGroup, ...]
) -> tuple[ConfigMap | None, list[Todo]]:
    name = settings.get("devicePlugin.config.name")
    if name is not None and name.value:
        found = _named(maps, str(name.value))
        if found is None:
            return None, [
                Todo(
                    f"devicePlugin.config.name ({name.origin}) names ConfigMap {name.value}, which was not given: "
                    "pass it with --configmap",
                    OPERATOR,
                )
            ]
        return found, []
    if inputs.values is not None or inputs.clusterpolicy is not None:
        return None, []  # the Operator runs the device plugin without a config file
    candidates = [cm for cm in maps if _looks_like_plugin(cm)]
    if not candidates:
        return None, []
    wanted = {g.plugin_config for g in groups if g.plugin_config}
    candidates.sort(key=lambda cm: (-len(wanted & set(cm.data)), cm.name))
    chosen = candidates[0]
    return chosen, [
        Todo(
            f"no --values or --clusterpolicy tells devicePlugin.config.name; assumed {chosen.label} "
            "(the one holding the keys the nodes name)",
            OPERATOR,
        )
    ]


def _select_mig_configmap(
    maps: list[ConfigMap], settings: dict[str, Setting], inputs: Inputs, groups: tuple[NodeGroup, ...]
) -> tuple[ConfigMap | None, list[Todo]]:
    name = settings.get("migManager.config.name")
    if name is not None and name.value and name.value != DEFAULT_MIG_CONFIGMAP:
        found = _named(maps, str(name.value))
        if found is None:
            return None, [
                Todo(
                    f"migManager.config.name ({name.origin}) names ConfigMap {name.value}, which was not given: "
                    "pass it with --configmap; the built-in configs were assumed",
                    OPERATOR,
                )
            ]
        if MIG_CONFIG_KEY not in found.data:
            return None, [Todo(f"{found.label} has no key {MIG_CONFIG_KEY}, which mig-manager needs", OPERATOR)]
        return found, []
    if name is not None or inputs.values is not None or inputs.clusterpolicy is not None:
        return None, []
    candidates = [cm for cm in maps if _looks_like_mig(cm) and cm.name != DEFAULT_MIG_CONFIGMAP]
    if not candidates:
        return None, []
    chosen = sorted(candidates, key=lambda cm: cm.name)[0]
    return chosen, [
        Todo(f"no --values or --clusterpolicy tells migManager.config.name; assumed {chosen.label}", OPERATOR)
    ]


def _policy_key(values_key: str) -> str:
    """A ``driver.upgradePolicy`` values key as the ClusterPolicy spec has it: the chart's templates/clusterpolicy.yaml
    renders ``gpuPodDeletion`` as ``podDeletion`` (as compile/operator.py's patch does)."""
    return values_key.replace(".gpuPodDeletion.", ".podDeletion.")


def _recover_upgrade_policy(inputs: Inputs, settings: dict[str, Setting], todos: list[Todo]) -> DriverUpgrade:
    """The ``driver.upgradePolicy`` keys the fleet models, into ``settings`` (values keys), the ClusterPolicy winning
    as for the other settings; a value of the wrong type is a TODO and left to gpustack-gen's default."""
    values_name = inputs.values_file or "values"
    policy_name = inputs.clusterpolicy_file or "ClusterPolicy"
    recovered: dict[str, Any] = {}
    for key, (field_name, kind) in UPGRADE_POLICY_MODELLED.items():
        in_values, from_values = lookup(inputs.values, key)
        in_policy, from_policy = lookup(inputs.clusterpolicy, _policy_key(key))
        if in_policy and in_values and from_policy != from_values:
            todos.append(_disagreement(key, values_name, from_values, from_policy))
        if in_policy and from_policy is not None:
            setting = Setting(from_policy, f"{policy_name} spec.{_policy_key(key)}")
        elif in_values and from_values is not None:
            setting = Setting(from_values, f"{values_name} {key}")
        else:
            continue
        # bool is an int in Python: a maxParallelUpgrades of true is not a count
        wrong_type = not isinstance(setting.value, kind) or (kind is int and isinstance(setting.value, bool))
        if wrong_type or (kind is int and not 0 <= setting.value <= 100_000):
            expected = "a count from 0 to 100000" if kind is int else "a boolean"
            todos.append(
                Todo(
                    f"{key}: {short_value(setting.value)} ({setting.origin}) is not {expected}; not imported", OPERATOR
                )
            )
            continue
        settings[key] = setting
        recovered[field_name] = setting.value
    return DriverUpgrade(**recovered)


def _upgrade_policy_not_kept(inputs: Inputs, upgrade: DriverUpgrade) -> list[Todo]:
    """The release's ``driver.upgradePolicy`` values the fleet does not model that differ from what it renders:
    gpustack-gen's values file comes last, so passing them through would not keep them."""
    rendered = {"driver": {"upgradePolicy": driver_upgrade_policy(upgrade)}}
    todos = []
    for path in _UPGRADE_POLICY_KEYS:
        if path in UPGRADE_POLICY_MODELLED:
            continue
        found, value = lookup(inputs.clusterpolicy, path)  # what runs now
        name = inputs.clusterpolicy_file or "ClusterPolicy"
        if not found:
            found, value = lookup(inputs.values, path)
            name = inputs.values_file or "values"
        _, ours = lookup(rendered, path)
        if found and value != ours:
            todos.append(
                Todo(
                    f"{name}: {path}: {short_value(value)} is not imported; the fleet renders {short_value(ours)}, which "
                    "the plans rely on (the driver DaemonSet is OnDelete: without the controller no node takes a new "
                    "driver)"
                )
            )
    return todos


def _pass_through(inputs: Inputs, consumed: set[str]) -> dict[str, Any]:
    """The values outside the fleet model, as the release has them: they go to a values file of the user's,
    which the plan's helm upgrade passes before gpustack-gen's (a helm upgrade given files renders from those
    alone: helm pkg/action/upgrade.go:585-588)."""

    def kept(data: dict[str, Any], prefix: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in data.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if path in consumed:
                continue
            if isinstance(value, dict) and value:
                value = kept(value, path)
                if not value:
                    continue
            out[key] = value
        return out

    return kept(inputs.values, "") if isinstance(inputs.values, dict) else {}


def _policy_outside_model(inputs: Inputs) -> list[Todo]:
    if not inputs.clusterpolicy:
        return []
    others = sorted(set(inputs.clusterpolicy) - _POLICY_SECTIONS)
    if not others:
        return []
    return [
        Todo(
            f"ClusterPolicy spec fields outside the fleet model were not imported ({', '.join(others)}, and image, "
            "env and resource settings): keep any you changed in a values file"
        )
    ]


# --- per pool ---------------------------------------------------------------------------------------


def plugin_policy(config: Any) -> tuple[dict[str, Any] | None, list[str], list[str]]:
    """A device-plugin config as a fleet sharing policy: (policy or None, outside the model, no effect)."""
    outside: list[str] = []
    no_effect: list[str] = []
    if not isinstance(config, dict):
        return None, ["it is not a mapping"], []
    for key in config:
        if key not in ("version", "flags", "sharing", "resources"):
            outside.append(key)
    if "resources" in config:
        no_effect.append("resources (the device plugin drops it)")
    flags = config.get("flags")
    for key in flags if isinstance(flags, dict) else {}:
        if key != "migStrategy":
            outside.append(f"flags.{key}")
    sharing = config.get("sharing")
    sharing = sharing if isinstance(sharing, dict) else {}
    for key in sharing:
        if key not in ("timeSlicing", "mps"):
            outside.append(f"sharing.{key}")
    strategy = "mps" if isinstance(sharing.get("mps"), dict) and sharing["mps"].get("resources") else "timeSlicing"
    block = sharing.get(strategy)
    if strategy == "mps" and "timeSlicing" in sharing:
        no_effect.append("sharing.timeSlicing (sharing.mps wins)")
    if not isinstance(block, dict) or not block.get("resources"):
        return None, outside, no_effect
    base = f"sharing.{strategy}"
    for key in block:
        if key not in ("renameByDefault", "failRequestsGreaterThanOne", "resources"):
            outside.append(f"{base}.{key}")
    resources = block["resources"] if isinstance(block["resources"], list) else []
    gpu_entries = []
    others = []
    for resource in resources:
        name = resource.get("name") if isinstance(resource, dict) else None
        full = name if not isinstance(name, str) or "/" in name else f"nvidia.com/{name}"
        if full == RESOURCE_GPU:
            gpu_entries.append(resource)
        else:
            others.append(short_value(full))
    if others:
        outside.append(f"{base}.resources for {', '.join(others)} (sharing MIG devices)")
    if len(gpu_entries) != 1:
        if len(gpu_entries) > 1:
            outside.append(f"{base}.resources (several entries for {RESOURCE_GPU})")
        return None, outside, no_effect
    entry = gpu_entries[0]
    replicas = entry.get("replicas")
    for key in entry:
        if key in ("rename", "devices"):
            no_effect.append(f"{base}.resources[].{key} (the device plugin resets it)")
        elif key not in ("name", "replicas"):
            outside.append(f"{base}.resources[].{key}")
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        outside.append(f"{base}.resources[].replicas {short_value(replicas)} (not an integer)")
        return None, outside, no_effect
    policy: dict[str, Any] = {"strategy": "time-slicing" if strategy == "timeSlicing" else "mps", "replicas": replicas}
    rename = block.get("renameByDefault")
    if rename is True:
        policy["renameByDefault"] = True
    elif rename not in (None, False):
        outside.append(f"{base}.renameByDefault {short_value(rename)} (not a boolean)")
    fail = block.get("failRequestsGreaterThanOne")
    if strategy == "timeSlicing":
        if fail is True:
            policy["failRequestsGreaterThanOne"] = True
        elif fail not in (None, False):
            outside.append(f"{base}.failRequestsGreaterThanOne {short_value(fail)} (not a boolean)")
    elif fail is False:
        # Honoured from device plugin v0.20.0 (Operator v26.7.0); older plugins force true, and the
        # fleet check then says so.
        policy["failRequestsGreaterThanOne"] = False
    elif fail is not True and fail is not None:
        outside.append(f"{base}.failRequestsGreaterThanOne {short_value(fail)} (not a boolean)")
    return policy, outside, no_effect


def mig_entry(config: Any, name: str, gpu: GpuModel) -> tuple[str, Any]:
    """What config ``name`` of a mig-parted file does to ``gpu``.

    ("layout", {profile: count}) | ("disabled", None) | ("missing", None) | ("outside", reason).
    """
    configs = config.get("mig-configs") if isinstance(config, dict) else None
    specs = configs.get(name) if isinstance(configs, dict) else None
    if specs is None:
        return "missing", None
    if not isinstance(specs, list):
        return "outside", "it is not a list of entries"
    ids = {i.lower() for i in gpu.pci_device_ids}
    matching = []
    for spec in specs:
        if not isinstance(spec, dict):
            return "outside", "an entry is not a mapping"
        device_filter = spec.get("device-filter")
        filters = [device_filter] if isinstance(device_filter, str) else device_filter
        if filters is not None and not (isinstance(filters, list) and {str(f).lower() for f in filters} & ids):
            continue
        matching.append(spec)
    if not matching:
        return "outside", f"no entry applies to {gpu.name} (device-filter)"
    if len(matching) > 1 or matching[0].get("devices", "all") != "all":
        return "outside", "it configures GPUs of one node differently (per-index devices)"
    spec = matching[0]
    if spec.get("mig-enabled") is False:
        return "disabled", None
    devices = spec.get("mig-devices")
    if spec.get("mig-enabled") is not True or not isinstance(devices, dict):
        return "outside", "mig-enabled or mig-devices is malformed"
    layout = {str(k): v for k, v in devices.items() if isinstance(v, int) and not isinstance(v, bool) and v > 0}
    if not layout:
        return "outside", "it enables MIG without creating MIG devices"
    if len(layout) != len(devices):
        return "outside", "mig-devices has counts that are not positive integers"
    return "layout", layout


def builtin_name_for(gpu: GpuModel, name: str, layout: dict[str, int]) -> bool:
    """Whether ``name`` is the Operator's built-in config for ``gpu`` with exactly this layout."""
    if name not in builtin_mig_config_names(gpu):
        return False
    entry = builtin_mig_config(gpu, name)
    return entry is not None and entry.mig_enabled and dict(entry.mig_devices) == layout


def plugin_key_of(labels: Mapping[str, str], state: ConfigSource) -> str | None:
    """The device-plugin config key a node uses: its label, else the default (None: no config)."""
    return labels.get(DEVICE_PLUGIN_LABEL) or state.plugin_default


def mig_name_of(labels: Mapping[str, str], state: ConfigSource) -> str:
    return labels.get(MIG_CONFIG_LABEL) or state.mig_default


def recover_sharing(
    group: NodeGroup, state: ConfigSource, default_name: str = "devicePlugin.config.default"
) -> PoolSharing:
    place = pool_place(group.name)
    todos: list[Todo] = []
    notes: list[str] = []
    warnings: list[str] = []
    policy: dict[str, Any] | None = None
    first = group.nodes[0].labels
    key = plugin_key_of(first, state)
    cm = state.plugin_configmap
    labelled = bool(first.get(DEVICE_PLUGIN_LABEL))
    how = f"node label {DEVICE_PLUGIN_LABEL}={key}" if labelled else default_name
    if key is not None and cm is None:
        if labelled:
            todos.append(
                Todo(
                    f"the nodes are labelled {DEVICE_PLUGIN_LABEL}={key} but no device-plugin ConfigMap is in use "
                    "or given; sharing not imported",
                    place,
                )
            )
    elif key is not None and cm is not None:
        if key not in cm.data:
            todos.append(
                Todo(
                    f"{how} names key {key}, which {cm.label} does not have (the device plugin cannot load it); "
                    "imported as whole GPUs",
                    place,
                )
            )
        else:
            config, error = parse_embedded(cm.data[key])
            if error is not None:
                todos.append(Todo(f"{cm.label} key {key} is not valid YAML ({error}); sharing not imported", place))
            else:
                policy, outside, no_effect = plugin_policy(config)
                notes.append(f"{cm.label} key {key} ({how})")
                warnings.extend(f"{cm.label} key {key}: {item} has no effect; dropped" for item in no_effect)
                if outside:
                    todos.append(
                        Todo(
                            f"{cm.label} key {key}: {', '.join(outside)} outside the fleet model; not imported",
                            place,
                        )
                    )
    gpu = group.gpu
    if gpu is None or not gpu.mig_capable:
        return PoolSharing(policy, tuple(notes), tuple(todos), key, None, tuple(warnings))
    name = mig_name_of(first, state)
    mig_how = f"node label {MIG_CONFIG_LABEL}={name}" if first.get(MIG_CONFIG_LABEL) else "migManager.config.default"
    outcome: tuple[str, Any]
    source: str
    if state.mig_configmap is not None:
        config, error = parse_embedded(state.mig_configmap.data.get(MIG_CONFIG_KEY, ""))
        source = f"{state.mig_configmap.label} config {name}"
        outcome = ("outside", f"not valid YAML ({error})") if error is not None else mig_entry(config, name, gpu)
    else:
        source = f"built-in mig-parted config {name}"
        entry = builtin_mig_config(gpu, name)
        if entry is None:
            outcome = ("missing", None)
        elif not entry.mig_enabled:
            outcome = ("disabled", None)
        elif not entry.mig_devices:
            outcome = ("outside", "it enables MIG without creating MIG devices")
        else:
            outcome = ("layout", dict(entry.mig_devices))
    kind, detail = outcome
    if kind == "missing":
        where = f"in {state.mig_configmap.label}" if state.mig_configmap is not None else "a built-in config"
        todos.append(
            Todo(
                f"{mig_how} names MIG config {name}, which is not {where} for {gpu.name}; MIG not imported",
                place,
            )
        )
        return PoolSharing(policy, tuple(notes), tuple(todos), key, name, tuple(warnings))
    if kind == "outside":
        todos.append(Todo(f"{source}: {detail}; outside the fleet model, MIG not imported", place))
        return PoolSharing(policy, tuple(notes), tuple(todos), key, name, tuple(warnings))
    if kind == "disabled":
        return PoolSharing(policy, tuple(notes), tuple(todos), key, name, tuple(warnings))
    assert isinstance(detail, dict)
    layout: dict[str, int] = dict(detail)
    if policy is not None:
        todos.append(
            Todo(
                f"{notes[-1]} shares the GPUs ({policy['strategy']}) while {source} partitions them with MIG; "
                "sharing MIG devices is outside the fleet model: imported as MIG only",
                place,
            )
        )
        notes.pop()
    if builtin_name_for(gpu, name, layout):
        policy = {"strategy": "mig", "config": name}
    else:
        policy = {"strategy": "mig", "layout": layout}
    notes.append(f"{source} ({mig_how})")
    return PoolSharing(policy, tuple(notes), tuple(todos), key, name, tuple(warnings))


def unused_config_todos(state: ConfigSource, pools: list[PoolSharing]) -> list[Todo]:
    todos = []
    cm = state.plugin_configmap
    if cm is not None:
        used = {p.plugin_key for p in pools if p.plugin_key} | {state.plugin_default}
        unused = [k for k in cm.data if k not in used]
        if unused:
            todos.append(
                Todo(
                    f"{cm.label}: no node uses key{'s' if len(unused) > 1 else ''} {', '.join(unused)} (not the "
                    f"default, and no node is labelled {DEVICE_PLUGIN_LABEL} with {'them' if len(unused) > 1 else 'it'})"
                    "; not imported"
                )
            )
    mig = state.mig_configmap
    if mig is not None:
        config, error = parse_embedded(mig.data.get(MIG_CONFIG_KEY, ""))
        configs = config.get("mig-configs") if isinstance(config, dict) and error is None else None
        used_names = {p.mig_name or "all-disabled" for p in pools} | {"all-disabled"}
        unused = [k for k in configs or {} if k not in used_names]
        if unused:
            todos.append(
                Todo(
                    f"{mig.label}: no node uses config{'s' if len(unused) > 1 else ''} {', '.join(unused)} (no node "
                    f"is labelled {MIG_CONFIG_LABEL} with {'them' if len(unused) > 1 else 'it'}); not imported"
                )
            )
    return todos
