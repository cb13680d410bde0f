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


@pytest.mark.usefixtures("restore_gc")
def test_what_the_pause_keeps_is_frozen_not_left_for_the_next_collection() -> None:
    from gpustack_gen.gcpause import gc_paused

    gc.enable()
    frozen = gc.get_freeze_count()
    with gc_paused():
        kept = [[index] for index in range(5000)]
        assert gc.get_freeze_count() == frozen  # nothing frozen before the block ends
    assert gc.get_freeze_count() >= frozen + len(kept)
    assert gc.get_count()[0] < len(kept)  # the youngest generation does not hold them
    assert gc.isenabled()


@pytest.mark.usefixtures("restore_gc")
def test_a_pause_inside_a_pause_freezes_once_at_the_outer_end() -> None:
    from gpustack_gen.gcpause import gc_paused

    gc.enable()
    with gc_paused():
        frozen = gc.get_freeze_count()
        with gc_paused():
            kept = [[index] for index in range(100)]
        assert not gc.isenabled()
        assert gc.get_freeze_count() == frozen
    assert gc.get_freeze_count() >= frozen + len(kept)
