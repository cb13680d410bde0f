"""The Kubernetes objects gpustack-gen reads from a cluster, as typed values, and their readers.

A reader takes one object as plain data (a ``kubectl get -o json`` item, or an API response turned into
a dict) and returns the typed object, or the message saying what it lacks. Readers are registered by
(apiVersion, kind) in :data:`READERS`: another API version of a kind is another entry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..errors import value_kind
from ..model.names import explain_dns_label, explain_object_name
from .load import Where


@dataclass(frozen=True)
class Node:
    name: str
    labels: dict[str, str]
    taints: tuple[dict[str, Any], ...]
    kubelet_version: str | None
    runtime_version: str | None  # status.nodeInfo.containerRuntimeVersion, such as cri-o://1.29.1
    where: Where
    capacity: dict[str, str] = field(default_factory=dict)
    allocatable: dict[str, str] = field(default_factory=dict)
    unschedulable: bool = False
    annotations: dict[str, str] = field(default_factory=dict)  # metadata.annotations (HAMi registers its GPUs here)


@dataclass(frozen=True)
class ConfigMap:
    name: str
    namespace: str | None
    data: dict[str, str]
    where: Where
    origin: str = ""  # how messages name it when it did not come from a ConfigMap document

    @property
    def label(self) -> str:
        return self.origin or f"ConfigMap {self.name}"


@dataclass(frozen=True)
class ClusterPolicy:
    name: str
    spec: dict[str, Any]
    labels: dict[str, str]  # metadata.labels, which name the chart that created it
    state: str | None  # status.state: ready, notReady...
    where: Where


@dataclass(frozen=True)
class _Workload:
    """A controller's rollout counts; each kind reads them from its own status fields (see its reader)."""

    name: str
    namespace: str | None
    desired: int
    ready: int
    updated: int
    current_generation: bool  # status.observedGeneration has caught up with metadata.generation
    where: Where


@dataclass(frozen=True)
class DaemonSet(_Workload):
    """Counts from status: desiredNumberScheduled, numberReady, updatedNumberScheduled."""


@dataclass(frozen=True)
class Deployment(_Workload):
    """Counts from spec.replicas (1 when unset), and status: readyReplicas, updatedReplicas."""


@dataclass(frozen=True)
class ContainerState:
    name: str
    init: bool
    ready: bool
    restarts: int
    waiting: str | None  # the reason it waits: CrashLoopBackOff, CreateContainerError...
    last_exit: str | None  # how its last run ended: "exit code 1 (Error)"
    message: str | None = None  # why it waits, as the kubelet says it (state.waiting.message)
    exit_message: str | None = None  # what its last run left (lastState/state.terminated.message)
    ran: bool = True  # it has run at least once: a container that never did has no logs, only describe and events

    @property
    def failing(self) -> bool:
        """Not ready, and waiting for a reason or last exited with an error."""
        return not self.ready and bool(self.waiting or self.last_exit)

    @property
    def trouble(self) -> str:
        """Why it is not ready, as messages name it: ``CrashLoopBackOff, exit code 1 (Error)``."""
        return ", ".join(reason for reason in (self.waiting, self.last_exit) if reason)

    @property
    def messages(self) -> tuple[str, ...]:
        """What the kubelet and its last run said, as given."""
        return tuple(text for text in (self.message, self.exit_message) if text)


@dataclass(frozen=True)
class Pod:
    name: str
    namespace: str | None
    node_name: str | None
    labels: dict[str, str]
    owner: str | None  # the name of the DaemonSet (or other controller) that owns it
    phase: str | None
    containers: tuple[ContainerState, ...]
    where: Where

    @property
    def ready(self) -> bool:
        return self.phase == "Running" and all(c.ready for c in self.containers if not c.init)

    @property
    def failing(self) -> tuple[ContainerState, ...]:
        return tuple(c for c in self.containers if c.failing)


@dataclass(frozen=True)
class Device:
    """One device a ResourceSlice publishes: its name, attributes and capacity, and what taints it."""

    name: str
    attributes: dict[str, str]  # name -> value as text; the driver's own domain is left out (gpu.nvidia.com/type: type)
    capacity: dict[str, str]  # name -> quantity
    taints: tuple[str, ...] = ()  # key=value:Effect (DeviceTaint)


@dataclass(frozen=True)
class ResourceSlice:
    """A DRA driver's devices on a node (resource.k8s.io), one slice of a pool: its pool's generation and size."""

    name: str
    driver: str
    node_name: str | None  # spec.nodeName; None: the pool is not a node's
    pool: str
    generation: int
    slice_count: int  # spec.pool.resourceSliceCount: the slices of the pool at that generation
    devices: tuple[Device, ...]
    where: Where


@dataclass(frozen=True)
class DraObject:
    """A DeviceClass, ResourceClaimTemplate or ResourceClaim (resource.k8s.io), as the cluster holds it."""

    kind: str
    api_version: str
    name: str
    namespace: str | None
    spec: dict[str, Any]
    labels: dict[str, str]
    where: Where
    reserved_for: int = 0  # a ResourceClaim's status.reservedFor: the pods that use it
    allocated_on: tuple[str, ...] = ()  # a ResourceClaim's status.allocation: the pools (nodes) of its devices


@dataclass(frozen=True)
class Event:
    """A core v1 Event: what happened to an object (``Failed``, ``BackOff``...) and the message that says why."""

    namespace: str | None
    object_kind: str | None  # involvedObject.kind: Pod, Node...
    object_name: str | None
    reason: str | None
    message: str | None
    type: str | None  # Normal or Warning
    count: int
    where: Where


_W = TypeVar("_W", bound=_Workload)

KubeObject = Node | ConfigMap | ClusterPolicy | DaemonSet | Deployment | Pod | ResourceSlice | DraObject | Event
Reader = Callable[[dict[str, Any], Where], "KubeObject | str"]


def metadata(data: Mapping[str, Any]) -> dict[str, Any]:
    return _mapping(data, "metadata")


def _mapping(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class MalformedField(Exception):
    """A field of an object is not of its type (a list given as a number...): the reader's problem, as a message."""


def _list(data: Mapping[str, Any], key: str, path: str) -> list[Any]:
    """``data[key]`` as a list: [] when absent or null, :class:`MalformedField` when it is anything else."""
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise MalformedField(f"{path} is {value_kind(value)}; the API gives a list")
    return value


def _name_problem(kind: str, meta: Mapping[str, Any], *node_names: Any) -> str | None:
    """Why an object's name, namespace or node name is not one the API server would take; None when they are.

    These names reach messages and printed commands, so a state file written by hand must not smuggle a newline or
    a shell metacharacter in through them.
    """
    for field_name, value, explain in (
        ("metadata.name", meta.get("name"), explain_object_name),
        ("metadata.namespace", meta.get("namespace"), explain_dns_label),
        *(("node name", node_name, explain_object_name) for node_name in node_names),
    ):
        problem = explain(value) if isinstance(value, str) and value else None
        if problem is not None:
            return f"{kind} {field_name} {problem}"
    return None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def read_node(data: dict[str, Any], where: Where) -> Node | str:
    meta = metadata(data)
    name = meta.get("name")
    labels = meta.get("labels") or {}
    if not isinstance(name, str) or not name or not isinstance(labels, dict):
        return "a Node without metadata.name or with malformed labels"
    bad_name = _name_problem("Node", meta)
    if bad_name:
        return bad_name
    spec = _mapping(data, "spec")
    status = _mapping(data, "status")
    info = _mapping(status, "nodeInfo")
    return Node(
        name=name,
        labels=_strings(labels),
        taints=tuple(t for t in _list(spec, "taints", "spec.taints") if isinstance(t, dict)),
        kubelet_version=_text(info.get("kubeletVersion")),
        runtime_version=_text(info.get("containerRuntimeVersion")),
        where=where,
        capacity=_strings(status.get("capacity")),
        allocatable=_strings(status.get("allocatable")),
        unschedulable=spec.get("unschedulable") is True,
        annotations=_strings(meta.get("annotations")),
    )


def read_configmap(data: dict[str, Any], where: Where) -> ConfigMap | str:
    meta = metadata(data)
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        return "a ConfigMap without metadata.name"
    bad_name = _name_problem("ConfigMap", meta)
    if bad_name:
        return bad_name
    body = data.get("data") or {}
    if not isinstance(body, dict) or not all(isinstance(v, str) for v in body.values()):
        return f"ConfigMap {name}: data must map keys to strings (config files)"
    return ConfigMap(name, _text(meta.get("namespace")), body, where)


def read_clusterpolicy(data: dict[str, Any], where: Where) -> ClusterPolicy | str:
    spec = data.get("spec")
    if not isinstance(spec, dict):
        return "a ClusterPolicy without spec"
    meta = metadata(data)
    bad_name = _name_problem("ClusterPolicy", meta)
    if bad_name:
        return bad_name
    state = _mapping(data, "status").get("state")
    return ClusterPolicy(
        name=str(meta.get("name") or ""),
        spec=spec,
        labels=_strings(meta.get("labels")),
        state=state if isinstance(state, str) else None,
        where=where,
    )


def read_daemonset(data: dict[str, Any], where: Where) -> DaemonSet | str:
    desired = _mapping(data, "status").get("desiredNumberScheduled")
    return _read_workload(DaemonSet, data, where, desired, ("numberReady", "updatedNumberScheduled"))


def read_deployment(data: dict[str, Any], where: Where) -> Deployment | str:
    replicas = _mapping(data, "spec").get("replicas")
    counts = ("readyReplicas", "updatedReplicas")
    return _read_workload(Deployment, data, where, 1 if replicas is None else replicas, counts)


def _read_workload(
    kind: type[_W], data: dict[str, Any], where: Where, desired: Any, counts: tuple[str, str]
) -> _W | str:
    """A DaemonSet or Deployment: ``counts`` names its status fields of ready and updated pods."""
    meta = metadata(data)
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        return f"a {kind.__name__} without metadata.name"
    bad_name = _name_problem(kind.__name__, meta)
    if bad_name:
        return bad_name
    status = _mapping(data, "status")
    generation = meta.get("generation")
    ready, updated = (_count(status.get(key)) for key in counts)
    return kind(
        name=name,
        namespace=_text(meta.get("namespace")),
        desired=_count(desired),
        ready=ready,
        updated=updated,
        current_generation=not isinstance(generation, int) or status.get("observedGeneration") == generation,
        where=where,
    )


def read_pod(data: dict[str, Any], where: Where) -> Pod | str:
    meta = metadata(data)
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        return "a Pod without metadata.name"
    spec = _mapping(data, "spec")
    bad_name = _name_problem("Pod", meta, spec.get("nodeName"))
    if bad_name:
        return bad_name
    status = _mapping(data, "status")
    owners = [
        o
        for o in _list(meta, "ownerReferences", "metadata.ownerReferences")
        if isinstance(o, dict) and o.get("controller")
    ]
    containers = [
        _container(c, init)
        for key, init in (("initContainerStatuses", True), ("containerStatuses", False))
        for c in _list(status, key, f"status.{key}")
        if isinstance(c, dict)
    ]
    return Pod(
        name=name,
        namespace=_text(meta.get("namespace")),
        node_name=_text(spec.get("nodeName")),
        labels=_strings(meta.get("labels")),
        owner=_text(owners[0].get("name")) if owners else None,
        phase=_text(status.get("phase")),
        containers=tuple(containers),
        where=where,
    )


def _container(status: dict[str, Any], init: bool) -> ContainerState:
    state = _mapping(status, "state")
    waiting = _mapping(state, "waiting")
    last = _mapping(_mapping(status, "lastState"), "terminated") or _mapping(state, "terminated")
    last_exit = None
    if last and last.get("exitCode") not in (None, 0):
        last_exit = f"exit code {last.get('exitCode')}" + (f" ({last['reason']})" if _text(last.get("reason")) else "")
    restarts = _count(status.get("restartCount"))
    return ContainerState(
        name=str(status.get("name") or ""),
        init=init,
        ready=status.get("ready") is True,
        restarts=restarts,
        waiting=_text(waiting.get("reason")),
        last_exit=last_exit,
        message=_text(waiting.get("message")),
        exit_message=_text(last.get("message")),
        ran=bool(last or _mapping(state, "running") or restarts),
    )


def _attribute(value: Any) -> str | None:
    """A DeviceAttribute (exactly one of string, version, int, bool) as text."""
    if not isinstance(value, dict):
        return None
    for key in ("string", "version", "int", "bool"):
        if key in value and value[key] is not None:
            found = value[key]
            return ("true" if found else "false") if isinstance(found, bool) else str(found)
    return None


def _device(data: Any, driver: str, nested: bool) -> Device | None:
    """A device of a slice; ``nested``: v1beta1, whose attributes and capacity sit under ``basic``."""
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None
    body = _mapping(data, "basic") if nested else data
    attributes = {}
    for key, value in _mapping(body, "attributes").items():
        text = _attribute(value)
        if text is not None:
            attributes[str(key).removeprefix(f"{driver}/")] = text
    capacity = {
        str(key): str(value["value"]) if isinstance(value, dict) and "value" in value else str(value)
        for key, value in _mapping(body, "capacity").items()
    }
    taints = tuple(
        f"{t.get('key')}" + (f"={t['value']}" if t.get("value") else "") + f":{t.get('effect')}"
        for t in _list(body, "taints", f"device {data['name']}: taints")
        if isinstance(t, dict)
    )
    return Device(data["name"], attributes, capacity, taints)


def _resourceslice_reader(nested: bool) -> Reader:
    def read_resourceslice(data: dict[str, Any], where: Where) -> ResourceSlice | str:
        meta = metadata(data)
        name = meta.get("name")
        spec = _mapping(data, "spec")
        driver = spec.get("driver")
        pool = _mapping(spec, "pool")
        if not isinstance(name, str) or not isinstance(driver, str) or not isinstance(pool.get("name"), str):
            return "a ResourceSlice without metadata.name, spec.driver or spec.pool.name"
        bad_name = _name_problem("ResourceSlice", meta, spec.get("nodeName"))
        if bad_name:
            return bad_name
        devices = [_device(d, driver, nested) for d in _list(spec, "devices", "spec.devices")]
        if any(d is None for d in devices):
            return f"ResourceSlice {name}: a device without a name"
        return ResourceSlice(
            name=name,
            driver=driver,
            node_name=_text(spec.get("nodeName")),
            pool=pool["name"],
            generation=_count(pool.get("generation")),
            slice_count=_count(pool.get("resourceSliceCount")) or 1,
            devices=tuple(d for d in devices if d is not None),
            where=where,
        )

    return read_resourceslice


def read_dra_object(data: dict[str, Any], where: Where) -> DraObject | str:
    meta = metadata(data)
    name, kind = meta.get("name"), str(data.get("kind"))
    spec = data.get("spec")
    if not isinstance(name, str) or not name or not isinstance(spec, dict):
        return f"a {kind} without metadata.name or spec"
    bad_name = _name_problem(kind, meta)
    if bad_name:
        return bad_name
    status = _mapping(data, "status")
    results = _list(_mapping(_mapping(status, "allocation"), "devices"), "results", "status.allocation.devices.results")
    return DraObject(
        kind=kind,
        api_version=str(data.get("apiVersion")),
        name=name,
        namespace=_text(meta.get("namespace")),
        spec=spec,
        labels=_strings(meta.get("labels")),
        where=where,
        reserved_for=len(_list(status, "reservedFor", "status.reservedFor")),
        allocated_on=tuple(sorted({str(r.get("pool")) for r in results if isinstance(r, dict) and r.get("pool")})),
    )


def read_event(data: dict[str, Any], where: Where) -> Event | str:
    meta = metadata(data)
    involved = _mapping(data, "involvedObject")
    if not involved:
        return "an Event without involvedObject"
    return Event(
        namespace=_text(meta.get("namespace")) or _text(involved.get("namespace")),
        object_kind=_text(involved.get("kind")),
        object_name=_text(involved.get("name")),
        reason=_text(data.get("reason")),
        message=_text(data.get("message")),
        type=_text(data.get("type")),
        count=_count(data.get("count")) or 1,
        where=where,
    )


# resource.k8s.io per Kubernetes minor: v1beta1 from 1.32 (a slice's device attributes under `basic`), v1beta2 from
# 1.33, v1 from 1.34 (k8s.io/api resource/*/types.go); kubectl writes the version the API server prefers.
RESOURCE_API_VERSIONS = ("resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1")
DRA_KINDS = ("DeviceClass", "ResourceClaimTemplate", "ResourceClaim")

READERS: dict[tuple[str, str], Reader] = {
    ("v1", "Node"): read_node,
    ("v1", "ConfigMap"): read_configmap,
    ("v1", "Pod"): read_pod,
    ("v1", "Event"): read_event,
    ("apps/v1", "DaemonSet"): read_daemonset,
    ("apps/v1", "Deployment"): read_deployment,
    ("nvidia.com/v1", "ClusterPolicy"): read_clusterpolicy,
    **{
        (version, "ResourceSlice"): _resourceslice_reader(version.endswith("v1beta1"))
        for version in RESOURCE_API_VERSIONS
    },
    **{(version, kind): read_dra_object for version in RESOURCE_API_VERSIONS for kind in DRA_KINDS},
}
API_VERSIONS: dict[str, str] = {kind: api_version for api_version, kind in READERS}
