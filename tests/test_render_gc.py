"""render pauses the cyclic garbage collector and leaves it as it found it, whatever happens."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpustack_gen import load_fleet, render, rendering
from gpustack_gen.errors import FleetError, InternalError
from gpustack_gen.model import Fleet

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "fleet.yaml"


@pytest.fixture(scope="module")
def fleet() -> Fleet:
    return load_fleet(EXAMPLE)


@pytest.fixture
def restore_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    if enabled:
        gc.enable()
    else:
        gc.disable()


@pytest.mark.usefixtures("restore_gc")
@pytest.mark.parametrize("enabled", [True, False])
def test_render_leaves_the_collector_as_it_was(fleet: Fleet, enabled: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    (gc.enable if enabled else gc.disable)()
    during: list[bool] = []
    compile_cluster = rendering.compile_cluster

    def observed(*args: object, **kwargs: object) -> object:
        during.append(gc.isenabled())
        return compile_cluster(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(rendering, "compile_cluster", observed)
    assert render(fleet).files
    assert during and not any(during)  # paused for every cluster
    assert gc.isenabled() is enabled


@pytest.mark.usefixtures("restore_gc")
def test_render_restores_the_collector_when_it_fails(fleet: Fleet, monkeypatch: pytest.MonkeyPatch) -> None:
    gc.enable()
    with pytest.raises(FleetError):
        render(fleet, clusters=["no-such-cluster"])
    assert gc.isenabled()

    def broken(*args: object) -> None:
        assert not gc.isenabled()
        raise InternalError("x.yaml", "", "a bad artifact")

    monkeypatch.setattr(rendering, "validate_artifacts", broken)
    with pytest.raises(InternalError):
        render(fleet)
    assert gc.isenabled()
