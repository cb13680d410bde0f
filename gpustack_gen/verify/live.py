"""Read a cluster's state from its API server, read-only: it lists, nothing else.

Through lightkube (a small, typed, maintained client whose ``list`` follows ``continue`` tokens): the
kubeconfig and context as kubectl takes them, each list paged, each page's items read by the same
readers as ``--from`` files (:mod:`gpustack_gen.k8s_state`). Imported only by ``verify`` without
``--from``, so that no other command loads the client.
"""

from __future__ import annotations

import functools
from typing import Any

from ..errors import FleetError, GpustackError, Problem
from ..k8s_state import Document, describe, read_objects
from ..k8s_state.objects import API_VERSIONS
from ..model.fleet import Cluster
from .state import RESOURCES, ClusterState, state_of, state_parts

PAGE_SIZE = 500  # objects per list request; the API server's continue token fetches the rest
NOT_FOUND = 404


class LiveStateError(GpustackError):
    """The cluster could not be read: no kubeconfig or context, unreachable, or a list was refused."""


def read_live_state(cluster: Cluster, *, kubeconfig: str | None = None, context: str | None = None) -> ClusterState:
    """The objects of ``cluster``'s state parts (nodes, ClusterPolicies, the Operator namespace's ConfigMaps,
    DaemonSets and pods, what its backend reads besides, such as ResourceSlices, and its backend's releases'
    workloads), from the API server.

    Raises :class:`LiveStateError` when the API cannot be read, :class:`FleetError` when it answers with
    objects the readers refuse.
    """
    from lightkube import ApiError, Client, ConfigError, KubeConfig

    try:
        config = (KubeConfig.from_file(kubeconfig) if kubeconfig else KubeConfig.from_env()).get(context_name=context)
    except ConfigError as exc:
        raise LiveStateError(f"kubeconfig: {exc}") from None
    assert config is not None  # get() without a default raises instead
    source = f"context {config.context_name}"
    problems: list[Problem] = []
    found: dict[str, list[Any]] = {}
    missing: dict[str, str] = {}
    with Client(config=config) as client:
        for part in state_parts(cluster):
            for kind in part.kinds:
                api_version = part.api_version or API_VERSIONS[kind]
                resource = _resource(kind, api_version)
                namespace = ALL_NAMESPACES if part.all_namespaces and kind in NAMESPACED else part.namespace
                label = f"{source}: {kind} list"
                try:
                    items = [
                        _plain(obj)
                        for obj in client.list(
                            resource, namespace=namespace, labels=_labels(part.selector), chunk_size=PAGE_SIZE
                        )
                    ]
                except ApiError as exc:
                    if exc.status.code == NOT_FOUND and part.name == "clusterpolicy":
                        items = []  # no ClusterPolicy CRD: the Operator is not installed, which the check reports
                    elif part.name == "events":  # optional: causes are ranked without them
                        missing[part.name] = f"{label}: {exc.status.code} {exc.status.reason}"
                        continue
                    else:
                        served = f" (is {api_version} served?)" if exc.status.code == NOT_FOUND else ""
                        raise LiveStateError(
                            f"{label}: {exc.status.code} {exc.status.reason}: {exc.status.message}{served}"
                        ) from None
                except _transport_errors() as exc:
                    raise LiveStateError(f"{source} ({config.cluster.server}): cannot list {kind}s: {exc}") from None
                document = Document({"apiVersion": api_version, "kind": f"{kind}List", "items": items}, 0)
                found.setdefault(part.name, []).extend(
                    read_objects(label, [document], (kind,), _unexpected(label), problems)
                )
    if problems:
        raise FleetError(problems)
    return state_of(source, found, missing)


NAMESPACED = frozenset(
    {"ConfigMap", "DaemonSet", "Deployment", "Event", "Pod", "ResourceClaimTemplate", "ResourceClaim"}
)
ALL_NAMESPACES = "*"  # lightkube's: a namespaced list across every namespace


@functools.cache
def _resource(kind: str, api_version: str) -> Any:
    """The kind's resource at that version, created once: lightkube registers each class for good.

    Generic resources: each item arrives as the API server's JSON, which the readers check, rather than
    through lightkube's typed models, which refuse a whole list over one field they do not expect.
    """
    from lightkube.generic_resource import create_global_resource, create_namespaced_resource

    group, _, version = api_version.rpartition("/")
    create = create_namespaced_resource if kind in NAMESPACED else create_global_resource
    return create(group, version, kind, RESOURCES[kind].split(".", 1)[0])


def _labels(selector: str | None) -> Any:
    """A ``key=value`` selector as lightkube takes it (a mapping; None: every object)."""
    if selector is None:
        return None
    key, value = selector.split("=", 1)
    return {key: value}


def _plain(obj: Any) -> dict[str, Any]:
    return dict(obj)  # a generic resource is the object's JSON as a dict


def _transport_errors() -> tuple[type[Exception], ...]:
    """Connection refused, timeouts, TLS: the transport errors of lightkube's HTTP client."""
    import httpx2

    return (httpx2.TransportError, OSError)


def _unexpected(label: str) -> Any:
    def problem(data: Any, line: int, path: str) -> Problem:
        return Problem(label, 0, 0, path, f"{describe(data)} in the answer to a list request")

    return problem
