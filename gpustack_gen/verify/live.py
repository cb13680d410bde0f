"""Read a cluster's state from its API server, read-only: it lists, nothing else.

Through lightkube (a small, typed, maintained client whose ``list`` follows ``continue`` tokens): the
kubeconfig and context as kubectl takes them, each list paged, each page's items read by the same
readers as ``--from`` files (:mod:`gpustack_gen.k8s_state`). Imported only by ``verify`` without
``--from``, so that no other command loads the client.

It runs one program: the kubeconfig user's ``exec`` credential plugin, as kubectl does. The API server is not
trusted: every read has a :class:`LiveBudget` (bytes per answer, requests, total time), an answer that is not a
Kubernetes list is a :class:`LiveStateError` naming the list, and a URL is printed as ``scheme://host:port`` only
(a kubeconfig's ``server:`` may carry ``user:password@`` and a query string a token).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..errors import FleetError, InputError, Problem
from ..k8s_state import Document, describe, read_objects
from ..k8s_state.objects import API_VERSIONS
from ..model.fleet import Cluster
from . import state_parts
from .state import RESOURCES, ClusterState, state_of

PAGE_SIZE = 500  # objects per list request; the API server's continue token fetches the rest
NOT_FOUND = 404


class LiveStateError(InputError):
    """The cluster could not be read: no kubeconfig or context, unreachable, or a list was refused."""


@dataclass(frozen=True)
class LiveBudget:
    """What reading a cluster may cost at most; past it the read stops with a :class:`LiveStateError`.

    A few thousand nodes' pods are some hundred pages of a few MB: these bounds are far above that, and stop a
    server whose ``continue`` token never ends, whose answer never ends, or that trickles it a byte at a time.
    """

    answer_bytes: int = 64 * 1024 * 1024
    requests: int = 1000
    seconds: float = 300.0


@dataclass
class _Spent:
    budget: LiveBudget
    started: float = field(default_factory=time.monotonic)
    requests: int = 0

    def check_time(self) -> None:
        if time.monotonic() - self.started > self.budget.seconds:
            raise LiveStateError(f"reading the cluster took longer than {self.budget.seconds:g} s; stopped")


def redacted_url(url: str) -> str:
    """``scheme://host[:port]`` of ``url``: no user, password, path or query (a kubeconfig's may carry secrets)."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return "(a URL that does not parse)"
    if not host:
        return "(a URL without a host)"
    host = f"[{host}]" if ":" in host else host  # IPv6
    return f"{parts.scheme}://{host}" + (f":{port}" if port else "")


def read_live_state(
    cluster: Cluster,
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    budget: LiveBudget = LiveBudget(),  # frozen: one shared default is safe
) -> ClusterState:
    """The objects of ``cluster``'s state parts (nodes, ClusterPolicies, the Operator namespace's ConfigMaps,
    DaemonSets and pods, what its backend reads besides, such as ResourceSlices, and its backend's releases'
    workloads), from the API server.

    Raises :class:`LiveStateError` when the API cannot be read, answers what is not a list or goes past
    ``budget``, :class:`FleetError` when it answers with objects the readers refuse.
    """
    from lightkube import ApiError, Client, ConfigError, KubeConfig

    spent = _Spent(budget)
    try:
        config = (KubeConfig.from_file(kubeconfig) if kubeconfig else KubeConfig.from_env()).get(context_name=context)
    except ConfigError as exc:
        raise LiveStateError(f"kubeconfig: {_one_line(exc)}") from None
    except (OSError, ValueError, TypeError, AttributeError, KeyError, _yaml_error()) as exc:
        # An empty or malformed file: lightkube reads it as YAML and indexes it without checking its shape.
        if isinstance(exc, OSError):
            reason = exc.strerror or _one_line(exc)
        elif isinstance(exc, _yaml_error()):
            reason = f"invalid YAML: {_one_line(exc)}"
        else:
            reason = "it is empty, or not a mapping of clusters, users and contexts"
        raise LiveStateError(f"kubeconfig {kubeconfig or '($KUBECONFIG or ~/.kube/config)'}: {reason}") from None
    if config is None:  # get() without a default raises instead; an empty kubeconfig gives None
        raise LiveStateError("kubeconfig: it names no context")
    server = redacted_url(str(config.cluster.server))
    source = f"context {config.context_name}"
    problems: list[Problem] = []
    found: dict[str, list[Any]] = {}
    try:
        client = Client(config=config)
    except (ConfigError, OSError) as exc:  # auth-provider (gone from kubectl), a CA or client key file missing
        raise LiveStateError(
            f"{source} ({server}): kubeconfig: {_one_line(exc)}"
            + (
                " (a certificate-authority, client-certificate or client-key of the kubeconfig)"
                if isinstance(exc, OSError)
                else ""
            )
        ) from None
    _bound(client, spent)
    missing: dict[str, str] = {}
    with client:
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
                except ConfigError as exc:  # the exec credential plugin failed (an expired SSO login, say)
                    raise LiveStateError(f"{source} ({server}): credentials: {_one_line(exc)}") from None
                except _transport_errors() as exc:
                    raise LiveStateError(f"{source} ({server}): cannot list {kind}s: {_one_line(exc)}") from None
                except _status_error() as exc:  # not a Kubernetes Status: a proxy's page, a redirect
                    raise LiveStateError(f"{label} ({server}): {_status_problem(exc.response)}") from None
                except ValueError as exc:  # lightkube's decoding: not JSON, or not a list (msgspec's errors)
                    raise LiveStateError(
                        f"{label} ({server}): the answer is not a Kubernetes list: {_one_line(exc)}"
                    ) from None
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


def _bound(client: Any, spent: _Spent) -> None:
    """Hooks on the client's HTTP session that hold every request and answer to ``spent``'s budget.

    lightkube gives its ``httpx`` client no hooks of its own; ``event_hooks`` is httpx's public way in, and a
    response hook runs before the body is read, so that the body can be read through a counting stream.
    """
    import httpx2

    session: httpx2.Client = client._client._client  # lightkube 1.0: Client -> GenericSyncClient -> httpx2.Client

    def on_request(request: httpx2.Request) -> None:
        spent.check_time()
        spent.requests += 1
        if spent.requests > spent.budget.requests:
            raise LiveStateError(
                f"more than {spent.budget.requests} requests: the API server's continue tokens do not end; stopped"
            )

    def on_response(response: httpx2.Response) -> None:
        if response.is_redirect:
            location = redacted_url(response.headers.get("location", ""))
            raise LiveStateError(
                f"the API server redirected to {location} (HTTP {response.status_code}); gpustack-gen follows no "
                "redirect: point the kubeconfig's server at the API server itself"
            )
        response.stream = _bounded_stream(response.stream, spent)

    session.event_hooks = {"request": [on_request], "response": [on_response]}


def _bounded_stream(inner: Any, spent: _Spent) -> Any:
    """An answer's body, read chunk by chunk within the budget's bytes and time (an httpx sync stream)."""
    import httpx2

    class BoundedStream(httpx2.SyncByteStream):
        def __iter__(self) -> Iterator[bytes]:
            size = 0
            for chunk in inner:
                size += len(chunk)
                if size > spent.budget.answer_bytes:
                    raise LiveStateError(
                        f"an answer of the API server is larger than {spent.budget.answer_bytes:,} bytes"
                    )
                spent.check_time()
                yield chunk

        def close(self) -> None:
            inner.close()

    return BoundedStream()


def _status_problem(response: Any) -> str:
    """An HTTP error whose body is not a Kubernetes Status, in words that name no URL (it may carry secrets)."""
    kind = response.headers.get("content-type", "no content type").split(";")[0]
    return f"HTTP {response.status_code} {response.reason_phrase} ({kind}), not an answer of the Kubernetes API"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__


def _status_error() -> Any:
    import httpx2

    return httpx2.HTTPStatusError


def _yaml_error() -> type[Exception]:
    import yaml  # type: ignore[import-untyped]  # lightkube reads kubeconfigs with PyYAML

    error: type[Exception] = yaml.YAMLError
    return error


def _transport_errors() -> tuple[type[Exception], ...]:
    """Connection refused, timeouts, TLS: the transport errors of lightkube's HTTP client."""
    import httpx2

    return (httpx2.TransportError, OSError)


def _unexpected(label: str) -> Any:
    def problem(data: Any, line: int, path: str) -> Problem:
        return Problem(label, 0, 0, path, f"{describe(data)} in the answer to a list request")

    return problem
