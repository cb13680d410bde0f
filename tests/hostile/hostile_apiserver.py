"""A misbehaving Kubernetes API server on 127.0.0.1, one behaviour per test, that stops by itself.

Each behaviour answers every request the same way: an HTML error page, a body that is not JSON, a JSON array, a
redirect, a huge body, a list whose ``continue`` token never ends, or a body trickled a byte at a time. The server
runs in a daemon thread for the ``with`` block and shuts down after it, or after ``lifetime`` seconds, whichever
comes first, so that a test that hangs cannot leave it running.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

EMPTY_LIST = {"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": []}


def _handler(behaviour: str, requests: list[str]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _answer(self, code: int, body: bytes, content_type: str = "application/json", **headers: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            requests.append(self.path)
            if behaviour == "html-500":
                self._answer(500, b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html")
            elif behaviour == "not-json":
                self._answer(200, b"{not json")
            elif behaviour == "json-array":
                self._answer(200, b"[1, 2, 3]")
            elif behaviour == "redirect":
                self._answer(302, b"", "text/plain", Location="https://user:secret@sso.example.com/login?token=abc")
            elif behaviour == "huge-body":
                item = {"metadata": {"name": "n", "labels": {"x": "y" * 1000}}}
                self._answer(200, json.dumps({**EMPTY_LIST, "items": [item] * 200_000}).encode())
            elif behaviour == "endless-continue":
                self._answer(
                    200, json.dumps({**EMPTY_LIST, "metadata": {"continue": f"page-{len(requests)}"}}).encode()
                )
            elif behaviour == "trickle":
                body = json.dumps(EMPTY_LIST).encode() + b" " * 10_000
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    for byte in body:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(0.05)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up, as it should
            else:
                self._answer(200, json.dumps(EMPTY_LIST).encode())

    return Handler


@contextmanager
def hostile_api_server(behaviour: str, lifetime: float = 120) -> Iterator[tuple[str, list[str]]]:
    """The server's URL and the paths it was asked for; it answers every request as ``behaviour`` says."""
    requests: list[str] = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(behaviour, requests))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    stopper = threading.Timer(lifetime, server.shutdown)  # stops by itself
    stopper.daemon = True
    stopper.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requests
    finally:
        stopper.cancel()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def write_kubeconfig(path: Path, server: str, user: dict[str, Any] | None = None) -> Path:
    """A kubeconfig of one context, ``hostile``, whose user is ``user`` (a token by default)."""
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "hostile", "cluster": {"server": server}}],
                "users": [{"name": "viewer", "user": user or {"token": "kubeconfig-token-5ecret"}}],
                "contexts": [{"name": "hostile", "context": {"cluster": "hostile", "user": "viewer"}}],
                "current-context": "hostile",
            }
        ),
        encoding="utf-8",
    )
    return path
