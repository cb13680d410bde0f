"""Read the inputs of ``gpustack-gen import`` and refuse inputs that are not what they claim.

Each input is YAML as kubectl or Helm writes it: a values file (one mapping, no ``kind``), ConfigMaps
(any number of documents, ``List`` wrappers welcome), the ClusterPolicy and the node list. A document of
the wrong kind (a values file passed as ``--nodes``, a Secret among the ConfigMaps) is an error located
at its line, with a hint naming the option it belongs to. Secrets are refused without reading their data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..errors import FleetError, Problem
from ..k8s_state import (
    ClusterPolicy,
    ConfigMap,
    Document,
    InputSource,
    InputText,
    Node,
    Where,
    describe,
    list_kinds,
    load_documents,
    read_objects,
    unwrap,
)
from ..yamlio.source import PathKey, SourceDocument

# Top-level keys of the GPU Operator chart's values.yaml: how a values file is recognised.
VALUES_KEYS = frozenset(
    {
        "platform",
        "nfd",
        "psa",
        "cdi",
        "sandboxWorkloads",
        "hostPaths",
        "daemonsets",
        "validator",
        "operator",
        "mig",
        "driver",
        "toolkit",
        "devicePlugin",
        "dcgm",
        "dcgmExporter",
        "gfd",
        "migManager",
        "nodeStatusExporter",
        "gds",
        "gdrcopy",
        "vgpuManager",
        "vgpuDeviceManager",
        "vfioManager",
        "kataManager",
        "sandboxDevicePlugin",
        "ccManager",
        "node-feature-discovery",
    }
)

_OPTION_FOR_KIND = {
    "Node": "--nodes",
    "NodeList": "--nodes",
    "ConfigMap": "--configmap",
    "ConfigMapList": "--configmap",
    "ClusterPolicy": "--clusterpolicy",
    "ClusterPolicyList": "--clusterpolicy",
    "DaemonSet": "--daemonsets",
    "DaemonSetList": "--daemonsets",
    "Pod": "--daemonsets",
    "PodList": "--daemonsets",
}
_WORKLOAD_KINDS = ("DaemonSet", "Pod")


@dataclass(frozen=True)
class ChartObject:
    """A DaemonSet or pod as ``kubectl get daemonset -A -o json`` gives it: what names the chart that made it."""

    kind: str
    name: str
    namespace: str | None
    labels: dict[str, str]
    images: tuple[tuple[str, str], ...]  # (container name, image)
    where: Where


@dataclass(frozen=True)
class Inputs:
    """Everything ``import`` read, as plain data."""

    values: dict[str, Any] | None = None
    values_file: str | None = None
    clusterpolicy: dict[str, Any] | None = None  # the ClusterPolicy's spec
    clusterpolicy_file: str | None = None
    clusterpolicy_labels: dict[str, str] = field(default_factory=dict)  # its metadata.labels
    configmaps: tuple[ConfigMap, ...] = ()
    nodes: tuple[Node, ...] = ()
    nodes_file: str | None = None
    files: tuple[str, ...] = field(default=())  # every input file, in the order given
    workloads: tuple[ChartObject, ...] = ()
    workloads_file: str | None = None
    values_source: SourceDocument | None = field(default=None, repr=False, compare=False)  # where each value is

    def values_line(self, path: PathKey) -> tuple[str, int, int]:
        """(file, line, column) of a values key (its nearest ancestor's where it has none)."""
        name = self.values_file or "--values"
        if self.values_source is None:
            return name, 0, 0
        line, column = self.values_source.locate(path, key=True)
        return name, line, column


def read_inputs(
    *,
    values: InputSource | None = None,
    configmaps: Sequence[InputSource] = (),
    clusterpolicy: InputSource | None = None,
    nodes: InputSource | None = None,
    workloads: InputSource | None = None,
) -> Inputs:
    """Read and check every input; raises :class:`FleetError` with all problems found."""
    problems: list[Problem] = []
    files: list[str] = []
    values_data: dict[str, Any] | None = None
    values_file = policy_file = nodes_file = None
    policy_spec: dict[str, Any] | None = None
    policy_labels: dict[str, str] = {}
    maps: list[ConfigMap] = []
    node_list: list[Node] = []
    chart_objects: list[ChartObject] = []
    values_source = workloads_file = None
    if values is not None:
        values_file, docs = load_documents(values, problems)
        files.append(values_file)
        before = len(problems)
        values_data = _values(values_file, docs, problems)
        if len(problems) == before and values_data:
            values_source = _positions(values, values_file)
    for source in configmaps:
        name, docs = load_documents(source, problems)
        files.append(name)
        maps.extend(_configmaps(name, docs, problems))
    if clusterpolicy is not None:
        policy_file, docs = load_documents(clusterpolicy, problems)
        files.append(policy_file)
        policy_spec, policy_labels = _clusterpolicy(policy_file, docs, problems)
    if nodes is not None:
        nodes_file, docs = load_documents(nodes, problems)
        files.append(nodes_file)
        node_list = _nodes(nodes_file, docs, problems)
    if workloads is not None:
        workloads_file, docs = load_documents(workloads, problems)
        files.append(workloads_file)
        chart_objects = _workloads(workloads_file, docs, problems)
    _check_unique_configmaps(maps, problems)
    if problems:
        raise FleetError(problems)
    return Inputs(
        values=values_data,
        values_file=values_file,
        clusterpolicy=policy_spec,
        clusterpolicy_file=policy_file,
        clusterpolicy_labels=policy_labels,
        configmaps=tuple(maps),
        nodes=tuple(node_list),
        nodes_file=nodes_file,
        files=tuple(files),
        workloads=tuple(chart_objects),
        workloads_file=workloads_file,
        values_source=values_source,
    )


# --- what each option accepts ----------------------------------------------------------------------


def _wrong(label: str, expected: str, data: Any, line: int, path: str = "") -> Problem:
    what, option = _describe(data)
    hint = f"pass it as {option}" if option else ""
    if isinstance(data, dict) and data.get("kind") == "Secret":
        hint = "gpustack-gen reads only ConfigMaps and never Secrets: remove it from the file, and do not share it"
    return Problem(label, line, 1 if line else 0, path, f"{what}, not {expected}", hint)


def _describe(data: Any) -> tuple[str, str]:
    """What a document is, and the option it belongs to ('' when none)."""
    if isinstance(data, dict) and not data.get("kind") and VALUES_KEYS & set(data):
        return "a GPU Operator values file", "--values"
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        return describe(data), ""
    if data["kind"] == "List":
        kinds = list_kinds(data)
        return describe(data), _OPTION_FOR_KIND.get(kinds[0], "") if len(kinds) == 1 else ""
    return describe(data), _OPTION_FOR_KIND.get(data["kind"], "")


def _read(label: str, docs: list[Document], kind: str, expected: str, problems: list[Problem]) -> list[Any]:
    # import has always read by kind, whatever apiVersion a hand-assembled input names
    wrong = partial(_wrong, label, expected)
    return read_objects(label, docs, (kind,), wrong, problems, any_api_version=True)


def _values(label: str, docs: list[Document], problems: list[Problem]) -> dict[str, Any]:
    if not docs:
        return {}
    if len(docs) > 1:
        problems.append(
            Problem(label, docs[1].line, 1, "", f"found {len(docs)} YAML documents; a values file holds one")
        )
        return {}
    data, line = docs[0].data, docs[0].line
    if not isinstance(data, dict) or ("kind" in data and "apiVersion" in data):
        problems.append(_wrong(label, "a GPU Operator values file", data, line))
        return {}
    return data


def _configmaps(label: str, docs: list[Document], problems: list[Problem]) -> list[ConfigMap]:
    return _read(label, docs, "ConfigMap", "a ConfigMap", problems)


def _clusterpolicy(
    label: str, docs: list[Document], problems: list[Problem]
) -> tuple[dict[str, Any] | None, dict[str, str]]:
    """The ClusterPolicy's spec and its metadata.labels (which name the chart that created it)."""
    found: list[ClusterPolicy] = _read(label, docs, "ClusterPolicy", "a ClusterPolicy", problems)
    if len(found) > 1:
        problems.append(
            Problem(
                label,
                found[1].where.line,
                1,
                "",
                f"found {len(found)} ClusterPolicies; a cluster has one",
                "kubectl get clusterpolicy cluster-policy -o yaml",
            )
        )
    if not found and docs and not problems:
        problems.append(Problem(label, 0, 0, "", "no ClusterPolicy in the file"))
    return (found[0].spec, found[0].labels) if found else (None, {})


def _nodes(label: str, docs: list[Document], problems: list[Problem]) -> list[Node]:
    return _read(label, docs, "Node", "a Node (kubectl get nodes -o yaml)", problems)


def _positions(source: InputSource, label: str) -> SourceDocument | None:
    """The values file read again with the position of every key, for messages; None where it cannot be."""
    from ..yamlio.source import parse_text

    try:
        text = source.text if isinstance(source, InputText) else source.read_text(encoding="utf-8-sig")
        return parse_text(text, label)
    except (OSError, UnicodeDecodeError, FleetError):
        return None


def _workloads(label: str, docs: list[Document], problems: list[Problem]) -> list[ChartObject]:
    """DaemonSets and pods, read only for their labels and images (what names the chart and its version)."""
    found: list[ChartObject] = []
    for data, line, path in unwrap(docs, _WORKLOAD_KINDS):
        if not isinstance(data, dict) or data.get("kind") not in _WORKLOAD_KINDS:
            problems.append(_wrong(label, "a DaemonSet or Pod (kubectl get daemonset -A -o json)", data, line, path))
            continue
        meta: dict[str, Any] = _field(data, "metadata", dict)
        spec: dict[str, Any] = _field(data, "spec", dict)
        if data["kind"] == "DaemonSet":
            spec = _field(_field(spec, "template", dict), "spec", dict)
        containers: list[Any] = _field(spec, "containers", list)
        images = tuple(
            (str(c.get("name", "")), c["image"])
            for c in containers
            if isinstance(c, dict) and isinstance(c.get("image"), str)
        )
        labels: dict[str, Any] = _field(meta, "labels", dict)
        namespace = meta.get("namespace")
        found.append(
            ChartObject(
                kind=str(data["kind"]),
                name=str(meta.get("name", "")),
                namespace=namespace if isinstance(namespace, str) else None,
                labels={str(k): str(v) for k, v in labels.items()},
                images=images,
                where=Where(label, line),
            )
        )
    return found


def _field(data: dict[str, Any], key: str, kind: type[Any]) -> Any:
    """``data[key]`` where it is of ``kind``, else an empty one: a malformed field names no chart."""
    value = data.get(key)
    return value if isinstance(value, kind) else kind()


def _check_unique_configmaps(maps: list[ConfigMap], problems: list[Problem]) -> None:
    seen: dict[tuple[str | None, str], ConfigMap] = {}
    for cm in maps:
        key = (cm.namespace, cm.name)
        if key in seen:
            first = seen[key]
            problems.append(
                Problem(
                    cm.where.file,
                    cm.where.line,
                    1 if cm.where.line else 0,
                    "",
                    f"ConfigMap {cm.name} is given twice (also {first.where})",
                    "pass each ConfigMap once",
                )
            )
        seen.setdefault(key, cm)
