"""GPU Operator Helm values (and, for ``clusterpolicy``, a ClusterPolicy's spec): the keys gpustack-gen
knows, checked against the pinned Operator version.

Only the keys of the version-gate table are checked; the hundreds of other chart keys are left alone.

- a key the pinned version lacks: an error, as Argo CD then fails to sync (gpu-operator#654); one it no
  longer reads (``cdi.default`` from v25.10.0, ``operator.defaultRuntime`` from v25.3.0): a warning;
- an unknown key inside a mapping the Operator knows completely (``cdi``, ``mig``, ``devicePlugin.config``...)
  and a near-miss of a top-level key (``devicePlugins``, ``migmanager``): an error with "did you mean";
- Helm value ``devicePlugin.mps.root``: a warning, a dead value (patch the ClusterPolicy instead);
- ``devicePlugin.config`` / ``migManager.config`` with ``create`` but no name or no data, or a ``default``
  that is not a key of the data: an error; their data is checked as the ConfigMap's would be;
- an empty ``migManager.config.name`` where the mig-manager generates per-node configs: a warning.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ...suggest import closest, similarity
from ...validate.findings import SchemaFinding, format_path
from ...validate.operator_keys import KeyGate
from ...validate.operator_schema import OperatorSchemaKind, check_operator_keys
from ...versions.gpu_operator import OperatorVersion
from ..detect import OPERATOR_TOP_LEVEL_KEYS, DocumentKind
from ..locate import Source, join_path
from ..reporter import WARNING, LintOptions, Reporter, get, parse_embedded, value_at
from . import device_plugin_config, mig_parted_config

ID = "operator-keys"
KINDS: tuple[DocumentKind, ...] = ("gpu-operator-values",)

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
# A top-level key lint does not know is normal (the chart has hundreds): it is a typo only when it is this
# close to one that lint knows, closer than a "did you mean" needs.
_TYPO_SIMILARITY = 0.85


def check(doc: Any, kind: DocumentKind, source: Source, prefix: str, r: Reporter, o: LintOptions) -> None:
    check_subset(doc, "gpu-operator-values", source, prefix, r, o)


def check_subset(
    data: Mapping[str, Any], kind: OperatorSchemaKind, source: Source, prefix: str, r: Reporter, o: LintOptions
) -> None:
    with r.running(ID):
        release = o.operator
        _gate_findings(check_operator_keys(data, kind, release), source, prefix, r, o)
        closed = _CLOSED_SPEC if kind == "clusterpolicy-spec" else _CLOSED_VALUES
        _closed_keys(data, closed, source, prefix, r, kind)
        if kind == "clusterpolicy-spec":
            _top_level_typos(data, source, prefix, r, "the API server prunes unknown ClusterPolicy fields")
        else:
            _top_level_typos(data, source, prefix, r, "Helm ignores values the chart does not read")
            _gate_findings(_lint_gates(data, release), source, prefix, r, o)
            if get(data, "devicePlugin", "mps", "root") is not None:
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
        name = get(data, "migManager", "config", "name")
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


def _top_level_typos(data: Mapping[str, Any], source: Source, prefix: str, r: Reporter, ignored_by: str) -> None:
    for key in data:
        if not isinstance(key, str) or key in OPERATOR_TOP_LEVEL_KEYS:
            continue
        match = closest(key, OPERATOR_TOP_LEVEL_KEYS)
        if match is not None and similarity(key, match) >= _TYPO_SIMILARITY:
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
        block = value_at(data, path)
        if not isinstance(block, Mapping):
            continue
        for key in block:
            if key in allowed:
                continue
            key_path = f"{path}.{key}" if isinstance(key, str) else path
            match = closest(str(key), allowed)
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
            r.add(source, prefix, finding.path, f"ignored from GPU Operator {since}: {what}", "remove it", WARNING)
        else:
            r.add(source, prefix, finding.path, finding.message, finding.hint)


def _lint_gates(data: Mapping[str, Any], release: OperatorVersion) -> list[SchemaFinding]:
    out = []
    for gate in _LINT_VALUES_GATES:
        if value_at(data, gate.path) is None or gate.allows(release):
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
        config = get(values, owner, "config")
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
            mig_parted_config.check_data(data, source, f"{base}.data", r, o)
            continue
        for key in data:
            parsed = parse_embedded(data, key, r, source, f"{base}.data")
            if parsed is not None:
                path = join_path(f"{base}.data", format_path([key]))
                device_plugin_config.check(parsed[0], "device-plugin-config", parsed[1], path, r, o)
        default = config.get("default")
        if isinstance(default, str) and default and default not in data:
            r.add(
                source,
                "",
                f"{base}.default",
                f"default config {default!r} is not a key of {base}.data",
                f"use one of: {', '.join(str(k) for k in data)}",
            )
