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
from ..k8s_state import DaemonSet, Document, Pod, describe, read_objects
from .state import PARTS, ClusterState

PAGE_SIZE = 500  # objects per list request; the API server's continue token fetches the rest
NOT_FOUND = 404


class LiveStateError(GpustackError):
    """The cluster could not be read: no kubeconfig or context, unreachable, or a list was refused."""


def read_live_state(namespace: str, *, kubeconfig: str | None = None, context: str | None = None) -> ClusterState:
    """Nodes, ClusterPolicies, and the ConfigMaps, DaemonSets and pods of ``namespace``, from the API server.

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
    kinds = {part.name: part.kinds for part in PARTS}
    problems: list[Problem] = []
    found: dict[str, list[Any]] = {}
    with Client(config=config) as client:
        for part, resource, namespaced in _resources():
            in_namespace = namespace if namespaced else None
            info = resource._api_info.resource
            kind = info.kind
            api_version = f"{info.group}/{info.version}" if info.group else info.version
            label = f"{source}: {kind} list"
            try:
                items = [_plain(obj) for obj in client.list(resource, namespace=in_namespace, chunk_size=PAGE_SIZE)]
            except ApiError as exc:
                if exc.status.code == NOT_FOUND and part == "clusterpolicy":
                    items = []  # no ClusterPolicy CRD: the Operator is not installed, which the check reports
                else:
                    raise LiveStateError(
                        f"{label}: {exc.status.code} {exc.status.reason}: {exc.status.message}"
                    ) from None
            except _transport_errors() as exc:
                raise LiveStateError(f"{source} ({config.cluster.server}): cannot list {kind}s: {exc}") from None
            document = Document({"apiVersion": api_version, "kind": f"{kind}List", "items": items}, 0)
            found.setdefault(part, []).extend(
                read_objects(label, [document], kinds[part], _unexpected(label), problems)
            )
    if problems:
        raise FleetError(problems)
    operator = found["operator"]
    return ClusterState(
        source=source,
        nodes=tuple(found["nodes"]),
        clusterpolicies=tuple(found["clusterpolicy"]),
        configmaps=tuple(found["configmaps"]),
        daemonsets=tuple(o for o in operator if isinstance(o, DaemonSet)),
        pods=tuple(o for o in operator if isinstance(o, Pod)),
    )


@functools.cache
def _resources() -> tuple[tuple[str, Any, bool], ...]:
    """(part, resource, namespaced) for each list, created once: lightkube registers each class for good.

    Generic resources: each item arrives as the API server's JSON, which the readers check, rather than
    through lightkube's typed models, which refuse a whole list over one field they do not expect.
    """
    from lightkube.generic_resource import create_global_resource, create_namespaced_resource

    return (
        ("nodes", create_global_resource("", "v1", "Node", "nodes"), False),
        ("clusterpolicy", create_global_resource("nvidia.com", "v1", "ClusterPolicy", "clusterpolicies"), False),
        ("configmaps", create_namespaced_resource("", "v1", "ConfigMap", "configmaps"), True),
        ("operator", create_namespaced_resource("apps", "v1", "DaemonSet", "daemonsets"), True),
        ("operator", create_namespaced_resource("", "v1", "Pod", "pods"), True),
    )


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
