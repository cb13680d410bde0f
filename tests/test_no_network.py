"""Render needs no network: every way of opening a connection raises while it runs."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from gpustack_gen import load_fleet, render

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "fleet.yaml"


class NetworkUsed(AssertionError):
    pass


def test_render_runs_with_every_connection_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[str] = []

    def refuse(name: str) -> Any:
        def refused(*args: object, **kwargs: object) -> Any:
            attempts.append(f"{name}{args!r}")
            raise NetworkUsed(f"network access during render: {name}{args!r}")

        return refused

    class NoSocket(socket.socket):
        def connect(self, *args: Any, **kwargs: Any) -> None:
            refuse("socket.connect")(*args)

        def connect_ex(self, *args: Any, **kwargs: Any) -> int:
            refuse("socket.connect_ex")(*args)
            return 1

        def sendto(self, *args: Any, **kwargs: Any) -> int:
            refuse("socket.sendto")(*args)
            return 0

    monkeypatch.setattr(socket, "socket", NoSocket)
    monkeypatch.setattr(socket, "create_connection", refuse("socket.create_connection"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("socket.getaddrinfo"))
    monkeypatch.setattr(socket, "gethostbyname", refuse("socket.gethostbyname"))

    with pytest.raises(NetworkUsed):  # the guard itself works
        socket.create_connection(("example.com", 443))
    with pytest.raises(NetworkUsed):
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).connect(("127.0.0.1", 9))
    attempts.clear()

    fleet = load_fleet(EXAMPLE)
    bundle = render(fleet)
    summary = bundle.write(tmp_path / "out")
    assert bundle.drift(tmp_path / "out").clean
    assert set(summary.written) == set(bundle.files)
    assert attempts == []
