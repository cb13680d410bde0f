"""A stand-in Kubernetes API server on 127.0.0.1: recorded list responses at the real API paths, paged.

It serves the objects of a ``--from`` fixture folder the way the API server answers list requests
(``kind: NodeList``, items without kind or apiVersion), honours ``limit`` with ``continue`` tokens (at most
``page`` items per answer, so that paging happens with a handful of objects) and ``labelSelector``
(``key=value``), answers 404 for what it does not hold (and for a resource.k8s.io version it is told not to
serve), and records every request. Plain HTTP: the
kubeconfig it writes points at ``http://``.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

RESOURCE_VERSIONS = ("v1", "v1beta2", "v1beta1")  # of resource.k8s.io
# API path -> the kind of its items
ROUTES = {
    "/api/v1/nodes": "Node",
    "/apis/nvidia.com/v1/clusterpolicies": "ClusterPolicy",
    "/api/v1/namespaces/{ns}/configmaps": "ConfigMap",
    "/apis/apps/v1/namespaces/{ns}/daemonsets": "DaemonSet",
    "/apis/apps/v1/namespaces/{ns}/deployments": "Deployment",
    "/api/v1/namespaces/{ns}/pods": "Pod",
    "/api/v1/namespaces/{ns}/events": "Event",
    # Every namespace's (the standalone device plugin's chart, read by its label wherever it was installed)
    "/api/v1/configmaps": "ConfigMap",
    "/apis/apps/v1/daemonsets": "DaemonSet",
    "/apis/apps/v1/deployments": "Deployment",
    "/api/v1/pods": "Pod",
    **{
        f"/apis/resource.k8s.io/{version}/{resource}": kind
        for version in RESOURCE_VERSIONS
        for resource, kind in (
            ("resourceslices", "ResourceSlice"),
            ("deviceclasses", "DeviceClass"),
            ("resourceclaimtemplates", "ResourceClaimTemplate"),  # every namespace's
            ("resourceclaims", "ResourceClaim"),
        )
    },
}
# (namespace, kind) -> the fixture file holding them; None: cluster-wide
FILES = {
    (None, "Node"): "nodes.json",
    (None, "ClusterPolicy"): "clusterpolicy.json",
    ("gpu-operator", "ConfigMap"): "configmaps.json",
    ("gpu-operator", "DaemonSet"): "operator.json",
    ("gpu-operator", "Pod"): "operator.json",
    ("gpu-operator", "Event"): "events.json",
    ("kube-system", "DaemonSet"): "hami.json",
    ("kube-system", "Deployment"): "hami.json",
    ("kube-system", "Pod"): "hami.json",
    (None, "ResourceSlice"): "resourceslices.json",
    (None, "DeviceClass"): "dra.json",
    (None, "ResourceClaimTemplate"): "dra.json",
    (None, "ResourceClaim"): "dra.json",
    ("nvidia-dra-driver-gpu", "DaemonSet"): "nvidia-dra-driver-gpu.json",
    ("nvidia-dra-driver-gpu", "Deployment"): "nvidia-dra-driver-gpu.json",
    ("nvidia-dra-driver-gpu", "Pod"): "nvidia-dra-driver-gpu.json",
    (None, "ConfigMap"): "configmaps.json",
    (None, "DaemonSet"): "nvdp.json",
    (None, "Deployment"): "nvdp.json",
    (None, "Pod"): "nvdp.json",
    ("nvidia-device-plugin", "Event"): "events.json",
}


@dataclass
class Recorded:
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path with query)


def _items(folder: Path, file: str | None, kind: str, selector: str | None) -> list[dict[str, Any]] | None:
    path = folder / file if file else None
    if path is None or not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    key, _, value = (selector or "").partition("=")
    items = []
    for item in data["items"]:
        if item["kind"] == kind and (not key or item["metadata"].get("labels", {}).get(key) == value):
            items.append({k: v for k, v in item.items() if k not in ("kind", "apiVersion")})
    return items


def _route(path: str, versions: tuple[str, ...]) -> tuple[str | None, str] | None:
    """(namespace, kind) of an API path; None when it is not one of ROUTES, or of a resource.k8s.io version the
    server does not serve."""
    group = "/apis/resource.k8s.io/"
    if path.startswith(group) and path[len(group) :].split("/", 1)[0] not in versions:
        return None
    for template, kind in ROUTES.items():
        head, _, tail = template.partition("{ns}")
        if not tail and path == template:
            return None, kind
        if tail and path.startswith(head) and path.endswith(tail) and "/" not in path[len(head) : -len(tail)]:
            return path[len(head) : -len(tail)], kind
    return None


def _handler(
    page: int, folder: Path, recorded: Recorded, forbidden: frozenset[str], versions: tuple[str, ...]
) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _send(self, code: int, body: dict[str, Any]) -> None:
            raw = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def _status(self, code: int, reason: str, message: str) -> None:
            self._send(
                code,
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Failure",
                    "message": message,
                    "reason": reason,
                    "code": code,
                },
            )

        def do_GET(self) -> None:
            recorded.requests.append(("GET", self.path))
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            route = _route(url.path, versions)
            if route is None:
                self._status(404, "NotFound", f"the server could not find the requested resource ({url.path})")
                return
            namespace, kind = route
            if kind in forbidden:
                self._status(403, "Forbidden", f'{kind.lower()}s is forbidden: User "viewer" cannot list resource')
                return
            items = _items(folder, FILES.get((namespace, kind)), kind, query.get("labelSelector", [None])[0])
            if items is None:
                self._status(404, "NotFound", "the server could not find the requested resource")
                return
            start = int(base64.b64decode(query["continue"][0])) if "continue" in query else 0
            limit = min(int(query["limit"][0]), page) if "limit" in query else len(items)
            chunk = items[start : start + limit]
            metadata: dict[str, Any] = {"resourceVersion": "48213500"}
            if start + limit < len(items):
                metadata["continue"] = base64.b64encode(str(start + limit).encode()).decode()
            api_version = (
                "v1" if url.path.startswith("/api/") else url.path.split("/")[2] + "/" + url.path.split("/")[3]
            )
            self._send(200, {"kind": f"{kind}List", "apiVersion": api_version, "metadata": metadata, "items": chunk})

        def do_POST(self) -> None:
            recorded.requests.append(("POST", self.path))
            self._status(405, "MethodNotAllowed", "read-only test server")

        do_PUT = do_PATCH = do_DELETE = do_POST

    return Handler


@contextmanager
def api_server(
    folder: Path, page: int = 2, forbidden: frozenset[str] = frozenset(), versions: tuple[str, ...] = RESOURCE_VERSIONS
) -> Iterator[tuple[str, Recorded]]:
    """The server's URL and its request log, for the length of the ``with`` block; ``forbidden`` kinds answer 403,
    and resource.k8s.io is served in ``versions`` only (as a cluster's Kubernetes minor decides)."""
    recorded = Recorded()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(page, folder, recorded, forbidden, versions))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", recorded
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def write_kubeconfig(path: Path, servers: dict[str, str], current: str) -> Path:
    """A kubeconfig with one context per entry of ``servers`` (context name -> server URL)."""
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": name, "cluster": {"server": url}} for name, url in servers.items()],
                "users": [{"name": "viewer", "user": {"token": "test-token"}}],
                "contexts": [{"name": name, "context": {"cluster": name, "user": "viewer"}} for name in servers],
                "current-context": current,
            }
        ),
        encoding="utf-8",
    )
    return path
