"""Read the inputs of ``gpustack-gen import`` and refuse inputs that are not what they claim.

Each input is YAML as kubectl or Helm writes it: a values file (one mapping, no ``kind``), ConfigMaps
(any number of documents, ``List`` wrappers welcome), the ClusterPolicy and the node list. A document of
the wrong kind (a values file passed as ``--nodes``, a Secret among the ConfigMaps) is an error located
at its line, with a hint naming the option it belongs to. Secrets are refused without reading their data.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import FleetError, Problem
from ..yamlio.limits import MAX_IMPORT_INPUT_BYTES
from ..yamlio.load import to_plain

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
}


@dataclass(frozen=True)
class InputText:
    """An input given as text rather than as a file (``name`` is how messages refer to it)."""

    name: str
    text: str


InputSource = Path | InputText


@dataclass(frozen=True)
class Where:
    """Where a document or list item starts."""

    file: str
    line: int  # 1-based; 0 when unknown

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(frozen=True)
class ConfigMapInput:
    name: str
    namespace: str | None
    data: dict[str, str]
    where: Where
    origin: str = ""  # how messages name it when it did not come from a ConfigMap document

    @property
    def label(self) -> str:
        return self.origin or f"ConfigMap {self.name}"


@dataclass(frozen=True)
class NodeInput:
    name: str
    labels: dict[str, str]
    taints: tuple[dict[str, Any], ...]
    kubelet_version: str | None
    runtime_version: str | None
    where: Where


@dataclass(frozen=True)
class Inputs:
    """Everything ``import`` read, as plain data."""

    values: dict[str, Any] | None = None
    values_file: str | None = None
    clusterpolicy: dict[str, Any] | None = None  # the ClusterPolicy's spec
    clusterpolicy_file: str | None = None
    clusterpolicy_labels: dict[str, str] = field(default_factory=dict)  # its metadata.labels
    configmaps: tuple[ConfigMapInput, ...] = ()
    nodes: tuple[NodeInput, ...] = ()
    nodes_file: str | None = None
    files: tuple[str, ...] = field(default=())  # every input file, in the order given


def read_inputs(
    *,
    values: InputSource | None = None,
    configmaps: Sequence[InputSource] = (),
    clusterpolicy: InputSource | None = None,
    nodes: InputSource | None = None,
) -> Inputs:
    """Read and check every input; raises :class:`FleetError` with all problems found."""
    problems: list[Problem] = []
    files: list[str] = []
    values_data: dict[str, Any] | None = None
    values_file = policy_file = nodes_file = None
    policy_spec: dict[str, Any] | None = None
    policy_labels: dict[str, str] = {}
    maps: list[ConfigMapInput] = []
    node_list: list[NodeInput] = []
    if values is not None:
        values_file, docs = _load(values, problems)
        files.append(values_file)
        values_data = _values(values_file, docs, problems)
    for source in configmaps:
        name, docs = _load(source, problems)
        files.append(name)
        maps.extend(_configmaps(name, docs, problems))
    if clusterpolicy is not None:
        policy_file, docs = _load(clusterpolicy, problems)
        files.append(policy_file)
        policy_spec, policy_labels = _clusterpolicy(policy_file, docs, problems)
    if nodes is not None:
        nodes_file, docs = _load(nodes, problems)
        files.append(nodes_file)
        node_list = _nodes(nodes_file, docs, problems)
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
    )


# --- parsing ---------------------------------------------------------------------------------------

_Doc = tuple[Any, int, tuple[int, ...]]  # plain data, 1-based line of the document and of each list item


def _load(source: InputSource, problems: list[Problem]) -> tuple[str, list[_Doc]]:
    if isinstance(source, InputText):
        return source.name, _parse(source.name, source.text, problems)
    label = source.as_posix() if not source.is_absolute() else source.name
    try:
        size = source.stat().st_size
        if size > MAX_IMPORT_INPUT_BYTES:
            problems.append(
                Problem(label, 0, 0, "", f"file is {size:,} bytes; the limit is {MAX_IMPORT_INPUT_BYTES:,}")
            )
            return label, []
        raw = source.read_bytes()
    except OSError as exc:
        problems.append(Problem(label, 0, 0, "", f"cannot read file: {exc.strerror or exc}"))
        return label, []
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        problems.append(
            Problem(label, line, 0, "", "not valid UTF-8", "kubectl and helm write UTF-8; save it as UTF-8")
        )
        return label, []
    return label, _parse(label, text, problems)


def _parse(label: str, text: str, problems: list[Problem]) -> list[_Doc]:
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    from ..yamlio.load import load_located_all

    if len(text) > MAX_IMPORT_INPUT_BYTES:
        problems.append(Problem(label, 0, 0, "", f"input is larger than {MAX_IMPORT_INPUT_BYTES:,} bytes"))
        return []
    try:
        # kubectl never writes duplicate keys; the last one wins, as in Kubernetes.
        raw_docs = load_located_all(text, allow_duplicate_keys=True)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        message = " ".join(str(exc.problem or exc).split())
        problems.append(Problem(label, line, column, "", f"invalid YAML: {message}"))
        return []
    except (YAMLError, RecursionError, ValueError) as exc:
        problems.append(Problem(label, 0, 0, "", f"invalid YAML: {' '.join(str(exc).split())}"))
        return []
    return [(to_plain(doc), _line(doc), _item_lines(doc)) for doc in raw_docs if doc is not None]


def _line(node: Any) -> int:
    lc = getattr(node, "lc", None)
    line = getattr(lc, "line", None)
    return line + 1 if isinstance(line, int) else 0


def _item_lines(doc: Any) -> tuple[int, ...]:
    items = doc.get("items") if isinstance(doc, Mapping) else None
    lc = getattr(items, "lc", None)
    if not isinstance(items, list) or lc is None:
        return ()
    lines = []
    for index in range(len(items)):
        try:
            lines.append(int(lc.item(index)[0]) + 1)
        except (KeyError, IndexError, TypeError):
            lines.append(0)
    return tuple(lines)


# --- what each option accepts ----------------------------------------------------------------------


def _describe(data: Any) -> tuple[str, str]:
    """What a document is, and the option it belongs to ('' when none)."""
    if not isinstance(data, dict):
        return f"a {type(data).__name__}", ""
    kind = data.get("kind")
    if isinstance(kind, str) and kind:
        name = _metadata(data).get("name")
        what = f"a {kind}" + (f" ({name})" if isinstance(name, str) and name else "")
        if kind == "List":
            kinds = sorted({str(i.get("kind")) for i in _items(data) if isinstance(i, dict) and i.get("kind")})
            what = "a List" + (f" of {', '.join(kinds)}" if kinds else "")
            return what, _OPTION_FOR_KIND.get(kinds[0], "") if len(kinds) == 1 else ""
        return what, _OPTION_FOR_KIND.get(kind, "")
    if VALUES_KEYS & set(data):
        return "a GPU Operator values file", "--values"
    return "a mapping without kind", ""


def _wrong(label: str, line: int, data: Any, expected: str, path: str = "") -> Problem:
    what, option = _describe(data)
    hint = f"pass it as {option}" if option else ""
    if isinstance(data, dict) and data.get("kind") == "Secret":
        hint = "gpustack-gen reads only ConfigMaps and never Secrets: remove it from the file, and do not share it"
    return Problem(label, line, 1 if line else 0, path, f"{what}, not {expected}", hint)


def _metadata(data: Mapping[str, Any]) -> dict[str, Any]:
    meta = data.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _items(data: Mapping[str, Any]) -> list[Any]:
    items = data.get("items")
    return items if isinstance(items, list) else []


def _unwrap(label: str, docs: list[_Doc], kind: str) -> Iterable[tuple[Any, int, str]]:
    """Each object of the documents, with lists (``kind: List`` / ``<kind>List``) opened."""
    for data, line, item_lines in docs:
        if isinstance(data, dict) and data.get("kind") in ("List", f"{kind}List"):
            for index, item in enumerate(_items(data)):
                if isinstance(item, dict) and "kind" not in item and data.get("kind") == f"{kind}List":
                    item = {**item, "kind": kind}
                item_line = item_lines[index] if index < len(item_lines) and item_lines[index] else line
                yield item, item_line, f"items[{index}]"
        else:
            yield data, line, ""


def _values(label: str, docs: list[_Doc], problems: list[Problem]) -> dict[str, Any]:
    if not docs:
        return {}
    if len(docs) > 1:
        problems.append(Problem(label, docs[1][1], 1, "", f"found {len(docs)} YAML documents; a values file holds one"))
        return {}
    data, line, _ = docs[0]
    if not isinstance(data, dict) or ("kind" in data and "apiVersion" in data):
        problems.append(_wrong(label, line, data, "a GPU Operator values file"))
        return {}
    return data


def _configmaps(label: str, docs: list[_Doc], problems: list[Problem]) -> list[ConfigMapInput]:
    found: list[ConfigMapInput] = []
    for data, line, path in _unwrap(label, docs, "ConfigMap"):
        if not isinstance(data, dict) or data.get("kind") != "ConfigMap":
            problems.append(_wrong(label, line, data, "a ConfigMap", path))
            continue
        meta = _metadata(data)
        name = meta.get("name")
        if not isinstance(name, str) or not name:
            problems.append(Problem(label, line, 1, path, "a ConfigMap without metadata.name"))
            continue
        namespace = meta.get("namespace")
        body = data.get("data") or {}
        if not isinstance(body, dict) or not all(isinstance(v, str) for v in body.values()):
            problems.append(
                Problem(label, line, 1, path, f"ConfigMap {name}: data must map keys to strings (config files)")
            )
            continue
        found.append(
            ConfigMapInput(
                name, namespace if isinstance(namespace, str) and namespace else None, body, Where(label, line)
            )
        )
    return found


def _clusterpolicy(
    label: str, docs: list[_Doc], problems: list[Problem]
) -> tuple[dict[str, Any] | None, dict[str, str]]:
    """The ClusterPolicy's spec and its metadata.labels (which name the chart that created it)."""
    found: list[tuple[dict[str, Any], int, dict[str, str]]] = []
    for data, line, path in _unwrap(label, docs, "ClusterPolicy"):
        if not isinstance(data, dict) or data.get("kind") != "ClusterPolicy":
            problems.append(_wrong(label, line, data, "a ClusterPolicy", path))
            continue
        spec = data.get("spec")
        if not isinstance(spec, dict):
            problems.append(Problem(label, line, 1, path, "a ClusterPolicy without spec"))
            continue
        labels = _metadata(data).get("labels")
        labels = {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}
        found.append((spec, line, labels))
    if len(found) > 1:
        problems.append(
            Problem(
                label,
                found[1][1],
                1,
                "",
                f"found {len(found)} ClusterPolicies; a cluster has one",
                "kubectl get clusterpolicy cluster-policy -o yaml",
            )
        )
    if not found and docs and not problems:
        problems.append(Problem(label, 0, 0, "", "no ClusterPolicy in the file"))
    return (found[0][0], found[0][2]) if found else (None, {})


def _nodes(label: str, docs: list[_Doc], problems: list[Problem]) -> list[NodeInput]:
    found: list[NodeInput] = []
    for data, line, path in _unwrap(label, docs, "Node"):
        if not isinstance(data, dict) or data.get("kind") != "Node":
            problems.append(_wrong(label, line, data, "a Node (kubectl get nodes -o yaml)", path))
            continue
        meta = _metadata(data)
        name = meta.get("name")
        labels = meta.get("labels") or {}
        if not isinstance(name, str) or not name or not isinstance(labels, dict):
            problems.append(Problem(label, line, 1, path, "a Node without metadata.name or with malformed labels"))
            continue
        spec = data.get("spec") if isinstance(data.get("spec"), dict) else {}
        taints = [t for t in (spec or {}).get("taints") or [] if isinstance(t, dict)]
        status = data.get("status") if isinstance(data.get("status"), dict) else {}
        info = (status or {}).get("nodeInfo")
        info = info if isinstance(info, dict) else {}
        kubelet = info.get("kubeletVersion")
        runtime = info.get("containerRuntimeVersion")
        found.append(
            NodeInput(
                name=name,
                labels={str(k): str(v) for k, v in labels.items()},
                taints=tuple(taints),
                kubelet_version=kubelet if isinstance(kubelet, str) else None,
                runtime_version=runtime if isinstance(runtime, str) else None,
                where=Where(label, line),
            )
        )
    return found


def _check_unique_configmaps(maps: list[ConfigMapInput], problems: list[Problem]) -> None:
    seen: dict[tuple[str | None, str], ConfigMapInput] = {}
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
