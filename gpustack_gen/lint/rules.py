"""Lint rules per document kind: the strict checks of ``gpustack_gen.validate`` plus the user pain points.

Every rule reports through a :class:`Reporter`, which turns a field path into ``file:line:col``. Rules
beyond the schemas come from what users trip over (``../shared/research/gpu-operator.md`` §5):

- a ConfigMap outside the Operator namespace (gpu-operator#412) -> error; no namespace -> warning;
- ``replicas: 1`` and quoted replicas -> error, with the "config without sharing" hint (k8s-device-plugin#1022);
- ``nvidia.com/mig-*`` resource names -> error;
- misplaced or misspelled keys -> error with "did you mean" (k8s-device-plugin#1433);
- ``renameByDefault: true`` -> warning: workloads must ask for ``<name>.shared`` (bottlerocket#4250);
- ``failRequestsGreaterThanOne: true`` -> warning: pods asking for more than one replica fail (k8s-device-plugin#321);
- MPS with ``migStrategy: mixed`` -> error; an unquoted ``device-filter`` -> error;
- Helm value ``devicePlugin.mps.root`` -> warning: a dead value, patch the ClusterPolicy instead;
- ``cdi.default`` on v25.10.0 or newer -> warning: ignored;
- a ClusterPolicy or values key the pinned version lacks -> error (gpu-operator#654), only for keys the
  version-gate table knows;
- ``migManager.config`` ConfigMap data (or Helm ``migManager.config.data``) without ``config.yaml`` -> error
  (gpu-operator#802, PR #1273);
- edits to ``default-mig-parted-config`` -> warning: the Operator resets them (gpu-operator#384).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..catalog.profile_grammar import unreadable_profile
from ..errors import Problem, Severity
from ..model.names import explain_label_value
from ..validate.device_plugin import check_device_plugin_config
from ..validate.findings import SchemaFinding, format_path
from ..validate.kubernetes import check_kubernetes_object, check_workload_fragment
from ..validate.mig_parted import check_mig_parted_config
from ..validate.operator_keys import KeyGate
from ..validate.operator_schema import OperatorSchemaKind, check_operator_keys
from ..versions import OperatorVersion
from .detect import OPERATOR_TOP_LEVEL_KEYS, DocumentKind
from .locate import Source, embedded_source, join_path, locate, parse_path

__all__ = ["LintOptions", "Reporter", "lint_document"]

ERROR, WARNING = Severity.ERROR, Severity.WARNING

_STRATEGIES = ("timeSlicing", "mps")

# Mappings whose keys the GPU Operator knows completely: unknown keys there get "did you mean".
_CLOSED_VALUES: Mapping[str, tuple[str, ...]] = {
    "cdi": ("enabled", "default", "nriPluginEnabled"),
    "mig": ("strategy",),
    "devicePlugin.config": ("name", "default", "create", "data"),
    "devicePlugin.mps": ("root",),
    "migManager.config": ("name", "default", "create", "data"),
}
_CLOSED_SPEC: Mapping[str, tuple[str, ...]] = {
    "cdi": ("enabled", "default", "nriPluginEnabled"),
    "mig": ("strategy",),
    "devicePlugin.config": ("name", "default"),
    "devicePlugin.mps": ("root",),
    "migManager.config": ("name", "default"),
}
# Helm values outside gpustack-gen's gate table that lint still checks per version.
_LINT_VALUES_GATES: tuple[KeyGate, ...] = (
    KeyGate("migManager.config.create", since="v24.6.0"),
    KeyGate("migManager.config.data", since="v24.6.0"),
    KeyGate("operator.defaultRuntime", until="v25.3.0"),
)
_NO_OP_FROM = {"cdi.default": "v25.10.0", "operator.defaultRuntime": "v25.3.0"}


@dataclass(frozen=True)
class LintOptions:
    """What to lint against: the GPU Operator release, its namespace, and the Kubernetes version."""

    operator: OperatorVersion
    namespace: str = "gpu-operator"
    kubernetes: str = "1.37"


@dataclass
class Reporter:
    """Collects the located problems of one file."""

    file: str
    lines: list[str]
    problems: list[Problem] = field(default_factory=list)

    def add(
        self,
        source: Source,
        prefix: str,
        path: str,
        message: str,
        hint: str = "",
        severity: Severity = ERROR,
    ) -> None:
        line, column = locate(source, parse_path(path))
        self.problems.append(Problem(self.file, line, column, join_path(prefix, path), message, hint, severity))

    def add_findings(
        self, source: Source, prefix: str, findings: Iterable[SchemaFinding], severity: Severity = ERROR
    ) -> None:
        for finding in findings:
            self.add(source, prefix, finding.path, finding.message, finding.hint, severity)


def _value_at(data: object, path: str) -> object:
    for part in parse_path(path):
        in_mapping = isinstance(data, Mapping) and part in data
        in_list = isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data)
        if not (in_mapping or in_list):
            return None
        data = data[part]  # type: ignore[index]
    return data


def _get(data: object, *keys: str) -> object:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _mapping(value: object) -> Mapping[Any, Any]:
    return value if isinstance(value, Mapping) else {}


def _closest(word: str, choices: Iterable[str], cutoff: float = 0.75) -> str | None:
    options = list(choices)
    for choice in options:
        if choice.lower() == word.lower():
            return choice
    match = difflib.get_close_matches(word.lower(), [c.lower() for c in options], n=1, cutoff=cutoff)
    return next((c for c in options if match and c.lower() == match[0]), None)


# --- embedded YAML ------------------------------------------------------------------------------


def _parse_embedded(
    parent: Any, key: Any, reporter: Reporter, source: Source, prefix: str
) -> tuple[Any, Source] | None:
    """Parse the YAML text ``parent[key]``; report and return None when it is not a YAML mapping."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    from ..yamlio.load import load_located

    value = parent[key]
    path = join_path(prefix, format_path([key]))
    if isinstance(value, Mapping):
        return value, embedded_source(parent, key, value, reporter.lines)
    if not isinstance(value, str):
        return None  # the ConfigMap schema already says it must be a string
    try:
        parsed = load_located(value)
    except YAMLError as exc:
        where = embedded_source(parent, key, None, reporter.lines)
        mark = getattr(exc, "problem_mark", None) if isinstance(exc, MarkedYAMLError) else None
        line, column = where.anchor
        if mark is not None and where.exact:
            line, column = mark.line + where.line_offset + 1, mark.column + where.col_offset + 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        reporter.problems.append(
            Problem(reporter.file, line, column, path, f"not valid YAML: {problem}", "fix the embedded YAML text")
        )
        return None
    if not isinstance(parsed, Mapping):
        # ``prefix`` names ``parent``, whose ruamel node knows its own (absolute) position.
        reporter.add(
            Source(parent, anchor=source.anchor),
            prefix,
            format_path([key]),
            "expected a YAML mapping (a config file) in this value",
        )
        return None
    return parsed, embedded_source(parent, key, parsed, reporter.lines)


# --- device plugin -----------------------------------------------------------------------------


def _device_plugin_hint(config: Mapping[str, Any], finding: SchemaFinding) -> SchemaFinding:
    value = _value_at(config, finding.path)
    hint = finding.hint
    if finding.path.endswith(".replicas") and str(value).strip() == "1":
        extra = (
            "replicas: 1 does not turn sharing off: to hand out whole GPUs on some nodes, add a config "
            "without a sharing section and label those nodes nvidia.com/device-plugin.config=<that key> "
            "(k8s-device-plugin#1022)"
        )
        hint = f"{hint}; {extra}" if hint else extra
    elif finding.path.endswith(".name") and isinstance(value, str) and "*" in value:
        extra = (
            "a wildcard is not a resource name: list each MIG resource, such as nvidia.com/mig-1g.10gb, "
            "or share whole GPUs as nvidia.com/gpu"
        )
        hint = f"{hint}; {extra}" if hint else extra
    return SchemaFinding(finding.path, finding.message, hint)


def device_plugin_config(config: Mapping[str, Any], source: Source, prefix: str, r: Reporter, o: LintOptions) -> None:
    findings = check_device_plugin_config(
        config, device_plugin_version=o.operator.device_plugin, mps_root_from_operator=True
    )
    r.add_findings(source, prefix, [_device_plugin_hint(config, f) for f in findings])
    for strategy in _STRATEGIES:
        block = _get(config, "sharing", strategy)
        if not isinstance(block, Mapping):
            continue
        resources = block.get("resources")
        names = [
            str(item.get("name"))
            for item in (resources if isinstance(resources, list) else [])
            if isinstance(item, Mapping) and isinstance(item.get("name"), str)
        ]
        names = [n if "/" in n else f"nvidia.com/{n}" for n in names] or ["nvidia.com/gpu"]
        if block.get("renameByDefault") is True:
            shared = ", ".join(f"{n}.shared" for n in names)
            r.add(
                source,
                prefix,
                f"sharing.{strategy}.renameByDefault",
                f"renames the shared resources to {shared}: workloads must request {shared}, not {', '.join(names)}",
                f"pods asking for {names[0]} stay Pending on these nodes (the node no longer advertises it); "
                "update their limits, or set renameByDefault: false",
                WARNING,
            )
        if block.get("failRequestsGreaterThanOne") is True and strategy == "timeSlicing":
            r.add(
                source,
                prefix,
                f"sharing.{strategy}.failRequestsGreaterThanOne",
                f"pods asking for more than one {names[0]} fail to start on these nodes",
                "a replica is a time slice, not a GPU: request 1, or set it to false (k8s-device-plugin#321)",
                WARNING,
            )


# --- mig-parted ----------------------------------------------------------------------------------


def mig_parted_config(config: Mapping[str, Any], source: Source, prefix: str, r: Reporter, o: LintOptions) -> None:
    r.add_findings(source, prefix, check_mig_parted_config(config))
    configs = config.get("mig-configs")
    if isinstance(configs, Mapping):
        for name, entries in configs.items():
            for index, entry in enumerate(entries if isinstance(entries, list) else []):
                devices = entry.get("mig-devices") if isinstance(entry, Mapping) else None
                for profile in devices if isinstance(devices, Mapping) else {}:
                    unreadable = unreadable_profile(o.operator, str(profile))
                    if unreadable is not None:
                        path = format_path(["mig-configs", name, index, "mig-devices", profile])
                        r.add(source, prefix, path, *unreadable)
            if isinstance(name, str) and explain_label_value(name) is not None:
                r.add(
                    source,
                    prefix,
                    format_path(["mig-configs", name]),
                    f"config name {name!r} is not a valid label value",
                    "nodes select it with the label nvidia.com/mig.config=<name>: use at most 63 letters, "
                    "digits, '-', '_' and '.', starting and ending with a letter or digit",
                )


# --- ConfigMaps ----------------------------------------------------------------------------------


def _namespace(doc: Mapping[str, Any], source: Source, r: Reporter, o: LintOptions) -> None:
    metadata = doc.get("metadata")
    namespace = metadata.get("namespace") if isinstance(metadata, Mapping) else None
    if namespace is None:
        r.add(
            source,
            "",
            "metadata",
            f"no metadata.namespace: kubectl puts the ConfigMap in the current namespace, and the GPU Operator "
            f"reads it only from {o.namespace!r}",
            f"set metadata.namespace: {o.namespace} (or let kustomize set it)",
            WARNING,
        )
    elif namespace != o.namespace:
        r.add(
            source,
            "",
            "metadata.namespace",
            f"ConfigMap in namespace {namespace!r}: the GPU Operator only reads ConfigMaps from its own "
            f"namespace {o.namespace!r}, and the plugin pods wait for a missing one (gpu-operator#412)",
            f"set metadata.namespace: {o.namespace}, or pass --namespace if the Operator runs in {namespace!r}",
        )


def _data(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    data = doc.get("data")
    return data if isinstance(data, Mapping) else {}


def configmap(doc: Mapping[str, Any], kind: DocumentKind, source: Source, r: Reporter, o: LintOptions) -> None:
    findings = check_kubernetes_object(doc, o.kubernetes)
    for finding in findings:
        hint = finding.hint
        if finding.path.startswith("data") and isinstance(_value_at(doc, finding.path), Mapping):
            hint = "ConfigMap data values are strings: write the key followed by '|' and indent the config below it"
        r.add(source, "", finding.path, finding.message, hint)
    _namespace(doc, source, r, o)
    data = _data(doc)
    if not data:
        r.add(source, "", "data", "no data: the ConfigMap holds no config", "add the config under data")
        return
    if kind == "device-plugin-configmap":
        for key in data:
            path = format_path(["data", key])
            if isinstance(key, str) and explain_label_value(key) is not None:
                r.add(
                    source,
                    "",
                    path,
                    f"key {key!r} is not a valid label value",
                    "nodes select a config with the label nvidia.com/device-plugin.config=<key>: use at most 63 "
                    "letters, digits, '-', '_' and '.'",
                )
            parsed = _parse_embedded(data, key, r, source, "data")
            if parsed is not None:
                device_plugin_config(parsed[0], parsed[1], path, r, o)
        return
    metadata = doc.get("metadata")
    if isinstance(metadata, Mapping) and metadata.get("name") == "default-mig-parted-config":
        r.add(
            source,
            "",
            "metadata.name",
            "the GPU Operator owns default-mig-parted-config and resets edits to it (gpu-operator#384)",
            "create a ConfigMap with another name and set migManager.config.name to it",
            WARNING,
        )
    _mig_data(data, source, "data", r, o)


def _mig_data(data: Mapping[str, Any], source: Source, prefix: str, r: Reporter, o: LintOptions) -> None:
    """The data of a mig-manager ConfigMap (or Helm ``migManager.config.data``): one key, config.yaml."""
    if "config.yaml" not in data:
        keys = [str(k) for k in data]
        at = format_path([keys[0]]) if keys else ""
        r.add(
            Source(data, anchor=source.anchor),  # ``prefix`` names ``data``: locate within it
            prefix,
            at,
            f"mig-manager reads only the key config.yaml; found {', '.join(repr(k) for k in keys) or 'no keys'}",
            f"rename {keys[0]!r} to config.yaml" if keys else "add the mig-parted config under the key config.yaml",
        )
    for key in data:
        parsed = _parse_embedded(data, key, r, source, prefix)
        if parsed is not None and (key == "config.yaml" or "mig-configs" in parsed[0]):
            mig_parted_config(parsed[0], parsed[1], join_path(prefix, format_path([key])), r, o)


# --- GPU Operator values and ClusterPolicy ---------------------------------------------------------


def _top_level_typos(data: Mapping[str, Any], source: Source, prefix: str, r: Reporter, ignored_by: str) -> None:
    for key in data:
        if not isinstance(key, str) or key in OPERATOR_TOP_LEVEL_KEYS:
            continue
        match = _closest(key, OPERATOR_TOP_LEVEL_KEYS, cutoff=0.85)
        if match is not None:
            r.add(
                source,
                prefix,
                format_path([key]),
                f"unknown key {key!r} (did you mean {join_path(prefix, match)}?)",
                f"keys are case-sensitive and {ignored_by}",
            )


def _closed_keys(
    data: Mapping[str, Any], closed: Mapping[str, tuple[str, ...]], source: Source, prefix: str, r: Reporter, kind: str
) -> None:
    for path, allowed in closed.items():
        block = _value_at(data, path)
        if not isinstance(block, Mapping):
            continue
        for key in block:
            if key in allowed:
                continue
            key_path = f"{path}.{key}" if isinstance(key, str) else path
            match = _closest(str(key), allowed)
            message = f"unknown key {str(key)!r}"
            if match is not None:
                message += f" (did you mean {join_path(prefix, f'{path}.{match}')}?)"
            if kind == "clusterpolicy-spec" and key in ("create", "data"):
                hint = f"{path}.{key} is a Helm value, not a ClusterPolicy field: create the ConfigMap yourself"
            elif kind == "clusterpolicy-spec":
                hint = "the ClusterPolicy CRD has no such field: the API server prunes it and Argo CD never syncs"
            else:
                hint = "the chart does not read it, so it has no effect"
            r.add(source, prefix, key_path, message, hint)


def _gate_findings(findings: Iterable[SchemaFinding], source: Source, prefix: str, r: Reporter, o: LintOptions) -> None:
    for finding in findings:
        since = _NO_OP_FROM.get(finding.path)
        if since is not None and o.operator.at_least(since) and finding.message.startswith("not used by"):
            what = (
                "CDI injection is native, so cdi.default does nothing"
                if finding.path == "cdi.default"
                else "the runtime is detected from the node, so it does nothing"
            )
            r.add(
                source,
                prefix,
                finding.path,
                f"ignored from GPU Operator {since}: {what}",
                "remove it",
                WARNING,
            )
        else:
            r.add(source, prefix, finding.path, finding.message, finding.hint)


def _lint_gates(data: Mapping[str, Any], release: OperatorVersion) -> list[SchemaFinding]:
    out = []
    for gate in _LINT_VALUES_GATES:
        if _value_at(data, gate.path) is None or gate.allows(release):
            continue
        if gate.until and release.at_least(gate.until):
            out.append(
                SchemaFinding(gate.path, f"not used by GPU Operator {release.version} (dropped in {gate.until})")
            )
        else:
            out.append(
                SchemaFinding(
                    gate.path,
                    f"not in the chart of GPU Operator {release.version} (added in {gate.since})",
                    f"remove it, or pin GPU Operator {gate.since} or newer",
                )
            )
    return out


def _values_configs(values: Mapping[str, Any], source: Source, r: Reporter, o: LintOptions) -> None:
    """``devicePlugin.config`` / ``migManager.config`` with ``create``/``data``: what the chart turns into ConfigMaps."""
    for owner in ("devicePlugin", "migManager"):
        config = _get(values, owner, "config")
        if not isinstance(config, Mapping):
            continue
        base = f"{owner}.config"
        data = config.get("data")
        if config.get("create") is True:
            if not config.get("name"):
                r.add(
                    source,
                    "",
                    f"{base}.name" if "name" in config else f"{base}.create",
                    f"{base}.create is true but {base}.name is empty",
                    "the chart names the ConfigMap after config.name: set it",
                )
            if not data:
                r.add(
                    source,
                    "",
                    f"{base}.create",
                    f"{base}.create is true but {base}.data is empty: no ConfigMap is created",
                    "put the configs under data (the chart fails on this from v26.3.0 for the device plugin "
                    "and silently skips the MIG ConfigMap)",
                )
        if not isinstance(data, Mapping) or not data:
            continue
        if owner == "migManager":
            _mig_data(data, source, f"{base}.data", r, o)
            continue
        for key in data:
            parsed = _parse_embedded(data, key, r, source, f"{base}.data")
            if parsed is not None:
                device_plugin_config(parsed[0], parsed[1], join_path(f"{base}.data", format_path([key])), r, o)
        default = config.get("default")
        if isinstance(default, str) and default and default not in data:
            r.add(
                source,
                "",
                f"{base}.default",
                f"default config {default!r} is not a key of {base}.data",
                f"use one of: {', '.join(str(k) for k in data)}",
            )


def operator_subset(
    data: Mapping[str, Any], kind: OperatorSchemaKind, source: Source, prefix: str, r: Reporter, o: LintOptions
) -> None:
    release = o.operator
    _gate_findings(check_operator_keys(data, kind, release), source, prefix, r, o)
    closed = _CLOSED_SPEC if kind == "clusterpolicy-spec" else _CLOSED_VALUES
    _closed_keys(data, closed, source, prefix, r, kind)
    if kind == "clusterpolicy-spec":
        _top_level_typos(data, source, prefix, r, "the API server prunes unknown ClusterPolicy fields")
    else:
        _top_level_typos(data, source, prefix, r, "Helm ignores values the chart does not read")
        _gate_findings(_lint_gates(data, release), source, prefix, r, o)
        if _get(data, "devicePlugin", "mps", "root") is not None:
            r.add(
                source,
                prefix,
                "devicePlugin.mps.root",
                "dead value: no chart template reads devicePlugin.mps.root, so it has no effect",
                "set spec.devicePlugin.mps.root on the ClusterPolicy instead (kubectl patch "
                "clusterpolicies.nvidia.com/cluster-policy --type merge); its default is /run/nvidia/mps",
                WARNING,
            )
        _values_configs(data, source, r, o)
    name = _get(data, "migManager", "config", "name")
    if name == "" and release.dynamic_mig_config:
        r.add(
            source,
            prefix,
            "migManager.config.name",
            f"empty: on GPU Operator {release.version} MIG manager generates a per-node config "
            "(<node>-mig-config) from the hardware; before v26.3.0 an empty name meant default-mig-parted-config",
            "set the name of your mig-parted ConfigMap, or remove the key to use the generated configs",
            WARNING,
        )


def clusterpolicy(doc: Mapping[str, Any], kind: DocumentKind, source: Source, r: Reporter, o: LintOptions) -> None:
    if kind == "clusterpolicy" and doc.get("apiVersion") != "nvidia.com/v1":
        r.add(source, "", "apiVersion", f"expected 'nvidia.com/v1', got {doc.get('apiVersion')!r}")
    spec = doc.get("spec")
    if not isinstance(spec, Mapping):
        r.add(source, "", "spec", "expected a mapping under spec")
        return
    # Nested ruamel nodes carry absolute positions: the spec mapping is a source of its own.
    operator_subset(spec, "clusterpolicy-spec", Source(spec, anchor=source.anchor), "spec", r, o)


# --- workload values fragments ---------------------------------------------------------------------


def workload(doc: Mapping[str, Any], source: Source, r: Reporter, o: LintOptions) -> None:
    r.add_findings(source, "", check_workload_fragment(doc, o.kubernetes))
    resources = doc.get("resources")
    if not isinstance(resources, Mapping):
        return
    limits = _mapping(resources.get("limits"))
    requests = _mapping(resources.get("requests"))
    for section, values in (("limits", limits), ("requests", requests)):
        for name, value in values.items():
            path = format_path(["resources", section, name])
            if isinstance(name, str) and name.startswith("nvidia.com/") and "*" in name:
                r.add(
                    source,
                    "",
                    path,
                    f"{name!r} is not a resource: the device plugin advertises one resource per MIG profile",
                    "request one profile, such as nvidia.com/mig-1g.10gb (see gpustack-gen gpus <gpu>)",
                )
            elif isinstance(name, str) and name.startswith("nvidia.com/"):
                text = str(value).strip()
                if not text.isdigit():
                    r.add(
                        source,
                        "",
                        path,
                        f"{name} must be a whole number, got {value!r}",
                        "a GPU (or a shared replica) cannot be split in a request: share GPUs with time-slicing, "
                        "MPS or MIG instead",
                    )
                elif section == "requests" and str(limits.get(name, "")).strip() != text:
                    r.add(
                        source,
                        "",
                        path,
                        f"extended resource {name} must be set in limits (a request, if any, must equal the limit)",
                        f'set resources.limits["{name}"]: "{text}"',
                    )


# --- dispatch ------------------------------------------------------------------------------------


def lint_document(doc: Any, kind: DocumentKind, source: Source, r: Reporter, o: LintOptions) -> None:
    """Run every rule for a document of ``kind`` (from :func:`detect`)."""
    if kind in ("device-plugin-configmap", "mig-parted-configmap"):
        configmap(doc, kind, source, r, o)
    elif kind == "device-plugin-config":
        device_plugin_config(doc, source, "", r, o)
    elif kind == "mig-parted-config":
        mig_parted_config(doc, source, "", r, o)
    elif kind in ("clusterpolicy", "clusterpolicy-patch"):
        clusterpolicy(doc, kind, source, r, o)
    elif kind == "gpu-operator-values":
        operator_subset(doc, "gpu-operator-values", source, "", r, o)
    elif kind == "workload-values":
        workload(doc, source, r, o)
