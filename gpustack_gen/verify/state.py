"""What ``verify`` knows of a running cluster: its nodes, ClusterPolicy, ConfigMaps, DaemonSets, pods and events, what
its backend reads besides (the DRA driver: ResourceSlices, DeviceClasses and claims), and the workloads of the
Helm releases its backend installs beside the Operator (HAMi's, the DRA driver's).

Each part is optional: a part that was not read (its file is missing) is None, and the checks that need it
are skipped and say so. :func:`state_parts` says which parts a cluster has and the kubectl command that
writes each; :func:`read_state_dir` reads those files, :mod:`.live` the same objects from the API.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..compile.backends import backend_of
from ..errors import FleetError, Problem
from ..k8s_state import (
    ClusterPolicy,
    ConfigMap,
    DaemonSet,
    Deployment,
    DraObject,
    Event,
    Node,
    Pod,
    ResourceSlice,
    describe,
    load_documents,
    read_objects,
)
from ..model.fleet import Cluster
from ..shell import IntoFile, Script, all_of, kubectl, text_in

# Kind -> the resource kubectl lists it by.
RESOURCES = {
    "Node": "nodes",
    "ClusterPolicy": "clusterpolicies.nvidia.com",
    "ConfigMap": "configmaps",
    "DaemonSet": "daemonsets",
    "Deployment": "deployments",
    "Pod": "pods",
    "Event": "events",
    "ResourceSlice": "resourceslices",
    "DeviceClass": "deviceclasses",
    "ResourceClaimTemplate": "resourceclaimtemplates",
    "ResourceClaim": "resourceclaims",
}
RELEASE_LABEL = "app.kubernetes.io/instance"  # Helm's release label, which charts put on their workloads and pods
# Not a file: where the backend keeps what a node registers beyond its allocatable (HAMi: an annotation of the
# node; the DRA driver: ResourceSlices). A check that reads it needs the parts the backend names for it.
REGISTRATION = "registration"


@dataclass(frozen=True)
class StatePart:
    """One file of a ``--from`` folder: the kinds it holds, where they are listed, and the command that writes it."""

    name: str  # what the checks call it: nodes, clusterpolicy, configmaps, operator, release, resourceslices, dra
    file: str
    kinds: tuple[str, ...]
    namespace: str | None = None  # None: cluster-wide objects, or (all_namespaces) every namespace's
    selector: str | None = None  # a label selector that narrows the lists
    all_namespaces: bool = False
    api_version: str | None = None  # the version the API is asked for (None: the one gpustack-gen reads)

    def command_into(self, folder: Path) -> Script:
        """The command writing the file into ``folder``, from where the user runs ``verify --from folder``."""
        where = ("-n", self.namespace) if self.namespace else ("-A",) if self.all_namespaces else ()
        narrowed = ("-l", self.selector) if self.selector else ()
        resources = ",".join(RESOURCES[kind] for kind in self.kinds)
        return IntoFile(kubectl("get", resources, *where, *narrowed, "-o", "json"), (folder / self.file).as_posix())


def state_parts(cluster: Cluster, own: tuple[StatePart, ...]) -> tuple[StatePart, ...]:
    """The parts ``verify`` reads of ``cluster``: those of every cluster (the ClusterPolicy and the Operator's
    workloads only where the backend installs the Operator), ``own`` (those its backend reads besides, from the
    verify registry of the caller; one named as a common part replaces it), then one per Helm release its backend
    installs (its DaemonSets, Deployments and pods, by the release label)."""
    compilers = backend_of(cluster)
    # Without the Operator (the hosts bring driver and toolkit) there is no ClusterPolicy and no Operator namespace.
    operator = compilers.INSTALLS_OPERATOR
    namespace = cluster.operator.namespace if operator else compilers.namespace(cluster)
    parts = (
        StatePart("nodes", "nodes.json", ("Node",)),
        *((StatePart("clusterpolicy", "clusterpolicy.json", ("ClusterPolicy",)),) if operator else ()),
        StatePart("configmaps", "configmaps.json", ("ConfigMap",), namespace),
        *((StatePart("operator", "operator.json", ("DaemonSet", "Pod"), namespace),) if operator else ()),
        # Optional: what the kubelet said of the Operator's pods (a container that never started says it only here
        # and in its waiting message).
        StatePart("events", "events.json", ("Event",), namespace),
    )
    releases = tuple(
        StatePart(
            "release", f"{release.name}.json", ("DaemonSet", "Deployment", "Pod"), release.namespace,
            f"{RELEASE_LABEL}={release.name}",
        )
        for release in compilers.releases(cluster)
    )  # fmt: skip
    # A backend's own part of a name stands in for the common one (the standalone plugin's release and ConfigMap,
    # read by the chart's labels in every namespace, wherever the release was installed).
    names = {part.name for part in own}
    return (
        tuple(part for part in parts if part.name not in names)
        + own
        + tuple(part for part in releases if part.name not in names)
    )


@dataclass(frozen=True)
class ClusterState:
    """The objects read from one cluster; None: that part was not read."""

    source: str  # how reports name where it came from: a folder, or a kubeconfig context
    nodes: tuple[Node, ...] | None = None
    clusterpolicies: tuple[ClusterPolicy, ...] | None = None
    configmaps: tuple[ConfigMap, ...] | None = None
    daemonsets: tuple[DaemonSet, ...] | None = None  # in the Operator's namespace
    pods: tuple[Pod, ...] | None = None  # in the Operator's namespace
    missing: dict[str, str] = field(default_factory=dict)  # part name -> why it was not read
    release: tuple[DaemonSet | Deployment | Pod, ...] | None = None  # the backend's releases' workloads and pods
    resourceslices: tuple[ResourceSlice, ...] | None = None  # every DRA driver's, cluster-wide
    dra: tuple[DraObject, ...] | None = None  # DeviceClasses, and ResourceClaimTemplates and claims in every namespace
    events: tuple[Event, ...] | None = None  # in the Operator's namespace

    def has(self, part: str) -> bool:
        """Whether ``part`` (a :class:`StatePart` name) was read."""
        if part == "operator":
            return self.daemonsets is not None and self.pods is not None
        return getattr(self, "clusterpolicies" if part == "clusterpolicy" else part) is not None

    @property
    def clusterpolicy(self) -> ClusterPolicy | None:
        return self.clusterpolicies[0] if self.clusterpolicies else None

    def configmap(self, namespace: str, name: str) -> ConfigMap | None:
        return next((c for c in self.configmaps or () if c.name == name and c.namespace in (namespace, None)), None)

    def pods_on(self, node: str) -> tuple[Pod, ...]:
        return self._pods_by_node.get(node, ())

    def events_of(self, pod: Pod) -> tuple[Event, ...]:
        """The events of ``pod``, as read (none when the events were not read)."""
        return tuple(
            event
            for event in self.events or ()
            if event.object_kind == "Pod" and event.object_name == pod.name and event.namespace in (pod.namespace, None)
        )

    def release_pods_on(self, node: str) -> tuple[Pod, ...]:
        return self._release_pods_by_node.get(node, ())

    # Indexed once: checks ask per node, and scanning every pod for each node is quadratic at fleet scale.
    @functools.cached_property
    def _pods_by_node(self) -> dict[str, tuple[Pod, ...]]:
        return _by_node(self.pods or ())

    @functools.cached_property
    def _release_pods_by_node(self) -> dict[str, tuple[Pod, ...]]:
        return _by_node(pod for pod in self.release or () if isinstance(pod, Pod))

    def slices_on(self, node: str) -> tuple[ResourceSlice, ...]:
        """The ResourceSlices of the node's own devices (``spec.nodeName``), of every driver."""
        return self._slices_by_node.get(node, ())

    @functools.cached_property
    def _slices_by_node(self) -> dict[str, tuple[ResourceSlice, ...]]:
        found: dict[str, list[ResourceSlice]] = {}
        for piece in self.resourceslices or ():
            if piece.node_name is not None:
                found.setdefault(piece.node_name, []).append(piece)
        return {node: tuple(pieces) for node, pieces in found.items()}


def _by_node(pods: Iterable[Pod]) -> dict[str, tuple[Pod, ...]]:
    """Pods by the node they run on, each node's in the order read (pods not yet scheduled have none)."""
    found: dict[str, list[Pod]] = {}
    for pod in pods:
        if pod.node_name is not None:
            found.setdefault(pod.node_name, []).append(pod)
    return {node: tuple(on_node) for node, on_node in found.items()}


def state_of(source: str, found: dict[str, list[Any]], missing: dict[str, str]) -> ClusterState:
    """The state made of the objects read per part (a part absent from ``found`` was not read)."""
    operator = found.get("operator")
    release = found.get("release")
    return ClusterState(
        source=source,
        nodes=_tuple(found.get("nodes")),
        clusterpolicies=_tuple(found.get("clusterpolicy")),
        configmaps=_tuple(found.get("configmaps")),
        daemonsets=None if operator is None else tuple(o for o in operator if isinstance(o, DaemonSet)),
        pods=None if operator is None else tuple(o for o in operator if isinstance(o, Pod)),
        missing=missing,
        release=None if release is None else tuple(o for o in release if isinstance(o, DaemonSet | Deployment | Pod)),
        resourceslices=_tuple(found.get("resourceslices")),
        dra=_tuple(found.get("dra")),
        events=_tuple(found.get("events")),
    )


def read_state_dir(directory: Path, cluster: Cluster, parts: tuple[StatePart, ...]) -> ClusterState:
    """The files of ``directory`` holding ``parts`` (see :func:`state_parts`); raises :class:`FleetError` on
    unreadable or wrong input."""
    problems: list[Problem] = []
    if not directory.is_dir():
        raise FleetError(
            [Problem(directory.as_posix(), 0, 0, "", "not a folder", "--from names the folder of the files")]
        )
    found: dict[str, list[Any]] = {}
    missing = {}
    for part in parts:
        path = directory / part.file
        if not path.exists():
            missing[part.name] = (
                f"{part.file} not found (write it with {_shown(cluster, part.command_into(directory))})"
            )
            continue
        before = len(problems)
        label, docs = load_documents(path, problems)
        if not docs and len(problems) == before:
            # What a failed `kubectl get ... > FILE` leaves: read as no objects, it would say the nodes are gone.
            problems.append(
                Problem(
                    label,
                    0,
                    0,
                    "",
                    "the file is empty, null or only comments: not a kubectl list",
                    f"write it again with {_shown(cluster, part.command_into(directory))}",
                )
            )
            continue
        objects = read_objects(label, docs, part.kinds, _wrong_kind(cluster, label, part, parts, directory), problems)
        found.setdefault(part.name, []).extend(objects)
    if not found:
        files = ", ".join(part.file for part in parts)
        commands = _shown(cluster, all_of(*(part.command_into(directory) for part in parts)))
        problems.append(Problem(directory.as_posix(), 0, 0, "", f"none of {files} is here", commands))
    if problems:
        raise FleetError(problems)
    return state_of(directory.as_posix(), found, missing)


def _tuple(objects: list[Any] | None) -> tuple[Any, ...] | None:
    return None if objects is None else tuple(objects)


def _shown(cluster: Cluster, script: Script) -> str:
    return text_in(cluster.kube_context, script)


def _wrong_kind(cluster: Cluster, label: str, part: StatePart, parts: tuple[StatePart, ...], directory: Path) -> Any:
    def problem(data: Any, line: int, path: str) -> Problem:
        kind = data.get("kind") if isinstance(data, dict) else None
        home = next((p for p in parts if kind in p.kinds), None)
        hint = _shown(cluster, part.command_into(directory))
        if home is not None and home is not part:
            hint = f"it belongs in {home.file}: {_shown(cluster, home.command_into(directory))}"
        expected = " or ".join(part.kinds)
        return Problem(label, line, 1 if line else 0, path, f"{describe(data)}, not a {expected}", hint)

    return problem
