"""What ``verify`` knows of a running cluster: its nodes, ClusterPolicy, ConfigMaps, DaemonSets and pods.

Each part is optional: a part that was not read (its file is missing) is None, and the checks that need it
are skipped and say so. :func:`read_state_dir` reads the files the README's kubectl commands write;
:mod:`.live` reads the same objects from the API.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import FleetError, Problem
from ..k8s_state import ClusterPolicy, ConfigMap, DaemonSet, Node, Pod, describe, load_documents, read_objects


@dataclass(frozen=True)
class StatePart:
    """One file of a ``--from`` folder: the kinds it holds and the command that writes it."""

    name: str  # what the checks call it: nodes, clusterpolicy, configmaps, operator
    file: str
    kinds: tuple[str, ...]
    command: str  # {namespace} is the Operator's namespace


PARTS = (
    StatePart("nodes", "nodes.json", ("Node",), "kubectl get nodes -o json > nodes.json"),
    StatePart(
        "clusterpolicy",
        "clusterpolicy.json",
        ("ClusterPolicy",),
        "kubectl get clusterpolicies.nvidia.com -o json > clusterpolicy.json",
    ),
    StatePart(
        "configmaps",
        "configmaps.json",
        ("ConfigMap",),
        "kubectl get configmaps -n {namespace} -o json > configmaps.json",
    ),
    StatePart(
        "operator",
        "operator.json",
        ("DaemonSet", "Pod"),
        "kubectl get daemonsets,pods -n {namespace} -o json > operator.json",
    ),
)
_PART_OF_KIND = {kind: part for part in PARTS for kind in part.kinds}


@dataclass(frozen=True)
class ClusterState:
    """The objects read from one cluster; None: that part was not read."""

    source: str  # how reports name where it came from: a folder, or a kubeconfig context
    nodes: tuple[Node, ...] | None = None
    clusterpolicies: tuple[ClusterPolicy, ...] | None = None
    configmaps: tuple[ConfigMap, ...] | None = None
    daemonsets: tuple[DaemonSet, ...] | None = None
    pods: tuple[Pod, ...] | None = None
    missing: dict[str, str] = field(default_factory=dict)  # part name -> why it was not read

    def has(self, part: str) -> bool:
        """Whether ``part`` (a :data:`PARTS` name) was read."""
        if part == "operator":
            return self.daemonsets is not None and self.pods is not None
        return getattr(self, "clusterpolicies" if part == "clusterpolicy" else part) is not None

    @property
    def clusterpolicy(self) -> ClusterPolicy | None:
        return self.clusterpolicies[0] if self.clusterpolicies else None

    def configmap(self, namespace: str, name: str) -> ConfigMap | None:
        return next((c for c in self.configmaps or () if c.name == name and c.namespace in (namespace, None)), None)

    def pods_on(self, node: str) -> tuple[Pod, ...]:
        return tuple(pod for pod in self.pods or () if pod.node_name == node)


def read_state_dir(directory: Path, namespace: str) -> ClusterState:
    """The files of ``directory`` (see :data:`PARTS`); raises :class:`FleetError` on unreadable or wrong input."""
    problems: list[Problem] = []
    if not directory.is_dir():
        raise FleetError(
            [Problem(directory.as_posix(), 0, 0, "", "not a folder", "--from names the folder of the files")]
        )
    found: dict[str, list[Any]] = {}
    missing = {}
    for part in PARTS:
        path = directory / part.file
        if not path.exists():
            missing[part.name] = f"{part.file} not found (write it with {part.command.format(namespace=namespace)})"
            continue
        label, docs = load_documents(path, problems)
        found[part.name] = read_objects(label, docs, part.kinds, _wrong_kind(label, part, namespace), problems)
    if not found:
        files = ", ".join(part.file for part in PARTS)
        commands = "; ".join(part.command.format(namespace=namespace) for part in PARTS)
        problems.append(Problem(directory.as_posix(), 0, 0, "", f"none of {files} is here", commands))
    if problems:
        raise FleetError(problems)
    operator = found.get("operator")
    return ClusterState(
        source=directory.as_posix(),
        nodes=_tuple(found.get("nodes")),
        clusterpolicies=_tuple(found.get("clusterpolicy")),
        configmaps=_tuple(found.get("configmaps")),
        daemonsets=None if operator is None else tuple(o for o in operator if isinstance(o, DaemonSet)),
        pods=None if operator is None else tuple(o for o in operator if isinstance(o, Pod)),
        missing=missing,
    )


def _tuple(objects: list[Any] | None) -> tuple[Any, ...] | None:
    return None if objects is None else tuple(objects)


def _wrong_kind(label: str, part: StatePart, namespace: str) -> Any:
    def problem(data: Any, line: int, path: str) -> Problem:
        kind = data.get("kind") if isinstance(data, dict) else None
        home = _PART_OF_KIND.get(str(kind))
        hint = part.command.format(namespace=namespace)
        if home is not None and home is not part:
            hint = f"it belongs in {home.file}: {home.command.format(namespace=namespace)}"
        expected = " or ".join(part.kinds)
        return Problem(label, line, 1 if line else 0, path, f"{describe(data)}, not a {expected}", hint)

    return problem
