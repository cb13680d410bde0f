"""MIG placement: the research note's examples, exhaustive counts, upstream-known layouts and a property."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ruamel.yaml import YAML

from gpustack_gen.catalog import GPUS, GpuModel, MigProfile, describe, get_gpu, place_layout


def _gpu(gpu_id: str) -> GpuModel:
    gpu = get_gpu(gpu_id)
    assert gpu is not None
    return gpu


A100_40 = _gpu("a100-40gb")
A30 = _gpu("a30-24gb")


# mig-placement.md §4: the requested A100-40GB examples, all placeable.
@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        ({"3g.20gb": 1, "2g.10gb": 2}, "2g@0 2g@2 3g@4"),
        ({"4g.20gb": 1, "3g.20gb": 1}, "4g@0 3g@4"),
        ({"1g.10gb": 3, "1g.5gb": 1}, "1g.10gb@0 1g.10gb@2 1g.10gb@4 1g.5gb@6"),
        ({"3g.20gb": 1, "1g.5gb": 4}, "1g@0 1g@1 1g@2 1g@3 3g@4"),
    ],
)
def test_section_4_examples_are_placeable(layout: dict[str, int], expected: str) -> None:
    placement = place_layout(A100_40, layout)
    assert placement.ok and placement.verified and placement.reason == ""
    assert describe(placement) == expected


# mig-placement.md §5: layouts that look like they fit but do not.
@pytest.mark.parametrize(
    ("gpu_id", "layout", "reason"),
    [
        # 1. memory slices ignored: compute 7, but 9 memory slices
        ("a100-40gb", {"3g.20gb": 2, "1g.5gb": 1}, "needs 9 of 8 memory slices"),
        # 2. 1g.10gb counted as one memory slice
        ("a100-40gb", {"4g.20gb": 1, "1g.10gb": 2, "1g.5gb": 1}, "needs 9 of 8 memory slices"),
        ("a100-40gb", {"3g.20gb": 1, "2g.10gb": 1, "1g.10gb": 1, "1g.5gb": 1}, "needs 9 of 8 memory slices"),
        # 7. two +me instances, also across profiles on A30
        ("a30-24gb", {"1g.6gb+me": 1, "2g.12gb+me": 1}, "more than one media-extension (+me) instance"),
        ("a100-40gb", {"1g.5gb+me": 2}, "more than one media-extension (+me) instance"),
        ("rtx-pro-6000-blackwell-96gb", {"1g.24gb+me.all": 1, "2g.48gb+me.all": 1}, "media-extension"),
    ],
)
def test_section_5_failures_are_rejected(gpu_id: str, layout: dict[str, int], reason: str) -> None:
    placement = place_layout(_gpu(gpu_id), layout)
    assert not placement.ok and not placement.slots
    assert reason in placement.reason
    assert describe(placement) == f"not placeable: {placement.reason}"


def test_section_5_gb_sums_do_not_reject_placeable_layouts() -> None:
    # 3. GB sums exceed the memory size, slices do not.
    assert place_layout(_gpu("h100-nvl-94gb"), {"3g.47gb": 1, "1g.12gb": 4}).ok
    assert place_layout(_gpu("h100-nvl-94gb"), {"3g.47gb": 1, "2g.24gb": 2}).ok
    assert place_layout(_gpu("h200-141gb"), {"3g.71gb": 1, "1g.18gb": 4}).ok
    assert place_layout(_gpu("b200-180gb"), {"3g.90gb": 1, "1g.23gb": 4}).ok


def test_media_engine_variants_on_rtx_pro() -> None:
    rtx = _gpu("rtx-pro-6000-blackwell-96gb")
    # '-me' means without media engines and '+gfx' is graphics: several of them fit beside one '+me.all'.
    assert place_layout(rtx, {"1g.24gb-me": 2, "1g.24gb+gfx": 1, "1g.24gb+me.all": 1}).ok


@pytest.mark.parametrize(
    ("layout", "reason"),
    [
        ({"1g.20gb": 1}, "A100-40GB has no MIG profile 1g.20gb (did you mean 1g.10gb"),
        ({"1g.5gb": -1}, "instance counts must be 0 or more (1g.5gb: -1)"),
        ({"1g.5gb": 0}, "at least one instance"),
        ({}, "at least one instance"),
        ({"4g.20gb": 2}, "at most 1 4g.20gb instance(s) fit on one A100-40GB"),
        ({"2g.10gb": 3, "1g.10gb": 1, "1g.5gb": 1}, "needs 8 of 7 compute slices"),
    ],
)
def test_invalid_layouts(layout: dict[str, int], reason: str) -> None:
    placement = place_layout(A100_40, layout)
    assert not placement.ok
    assert reason in placement.reason


def test_non_mig_gpu_is_rejected() -> None:
    placement = place_layout(_gpu("tesla-t4"), {"1g.5gb": 1})
    assert not placement.ok and placement.reason == "Tesla T4 does not support MIG"


def test_unverified_model_falls_back_to_slice_sums() -> None:
    b200 = _gpu("b200-180gb")
    placement = place_layout(b200, {"3g.90gb": 1, "1g.23gb": 4, "2g.45gb": 0})
    assert placement.ok and not placement.verified and placement.slots == ()
    assert placement.layout == (("1g.23gb", 4), ("3g.90gb", 1))
    assert describe(placement) == "1g.23gb x4 + 3g.90gb x1 (fits the slice totals; placement table unverified)"
    assert "needs 9 of 8 memory slices" in place_layout(b200, {"3g.90gb": 2, "1g.23gb": 1}).reason


def _made_up_gpu(*profiles: MigProfile) -> GpuModel:
    return GpuModel("made-up", "Made-up", "ampere", 24, True, (), (), 4, 4, 4, profiles)


# Slice sums are exact on every real table, so placement-only failures need made-up ones.
@pytest.mark.parametrize(
    ("profiles", "reason"),
    [
        (
            (MigProfile("1g.6gb", 1, 1, 4, (1,), 1), MigProfile("2g.12gb", 2, 2, 2, (0,), 2)),
            "1g.6gb can start only at slice 1, and it is taken by 2g.12gb@0",
        ),
        (
            (
                MigProfile("1g.6gb", 1, 1, 1, (1,), 1),
                MigProfile("1g.6gb+gfx", 1, 1, 1, (3,), 1),
                MigProfile("2g.12gb", 2, 2, 2, (0, 2), 2),
            ),
            "2g.12gb can start only at slices 0 and 2, and both are taken by 1g.6gb@1 and 1g.6gb+gfx@3",
        ),
    ],
)
def test_placement_failure_names_the_blocking_instances(profiles: tuple[MigProfile, ...], reason: str) -> None:
    gpu = _made_up_gpu(*profiles)
    placement = place_layout(gpu, {p.name: 1 for p in profiles})
    assert not placement.ok and placement.verified
    assert placement.reason.startswith(reason)


def _fitting_layouts(gpu: GpuModel) -> list[dict[str, int]]:
    """Every non-empty multiset of the model's profiles within the compute and memory slice totals."""
    assert gpu.compute_slices is not None and gpu.memory_slices is not None
    ranges = [range(gpu.memory_slices // p.memory_slices + 1) for p in gpu.profiles]
    layouts = []
    for counts in itertools.product(*ranges):
        chosen = [(p, n) for p, n in zip(gpu.profiles, counts, strict=True) if n]
        compute = sum(p.compute_slices * n for p, n in chosen)
        memory = sum(p.memory_slices * n for p, n in chosen)
        if chosen and compute <= gpu.compute_slices and memory <= gpu.memory_slices:
            layouts.append({p.name: n for p, n in chosen})
    return layouts


def _media_count(gpu: GpuModel, layout: dict[str, int]) -> int:
    return sum(n for name, n in layout.items() if (p := gpu.profile(name)) is not None and p.has_media_extensions)


@pytest.mark.parametrize(
    ("gpu_id", "fitting", "placeable"),
    [("a100-40gb", 203, 127), ("a100-80gb", 203, 127), ("h100-80gb", 203, 127), ("a30-24gb", 30, 19)],
)
def test_exhaustive_counts(gpu_id: str, fitting: int, placeable: int) -> None:
    # mig-placement.md §3: placeable == fits the slice sums with at most one +me instance.
    gpu = _gpu(gpu_id)
    layouts = _fitting_layouts(gpu)
    ok = [layout for layout in layouts if place_layout(gpu, layout).ok]
    assert (len(layouts), len(ok)) == (fitting, placeable)
    assert all(_media_count(gpu, layout) <= 1 for layout in ok)


def _known_geometries(upstream: Path) -> list[tuple[str, dict[str, int]]]:
    data = YAML(typ="safe").load((upstream / "gpu-facts.yaml").read_text(encoding="utf-8"))
    device_ids = {gpu.pci_device_ids[0]: gpu.id for gpu in GPUS}
    cases = []
    for entry in data["gpus"]:
        for layout in entry.get("known_valid_geometries", []):
            gpu = next(g for g in GPUS if g.pci_device_ids == tuple(entry["pci_device_ids"]))
            cases.append((gpu.id, layout))
        by_device: dict[str, Any] = entry.get("known_valid_geometries_by_device", {})
        for device, layouts in by_device.items():
            cases.extend((device_ids[device], layout) for layout in layouts)
    return cases


def test_known_valid_geometries_are_placeable(upstream: Path) -> None:
    cases = _known_geometries(upstream)
    assert {gpu_id for gpu_id, _ in cases} == {gpu.id for gpu in GPUS if gpu.mig_capable}
    failures = [(gpu_id, layout, place_layout(_gpu(gpu_id), layout).reason) for gpu_id, layout in cases]
    assert [f for f in failures if f[2]] == []


VERIFIED = [gpu for gpu in GPUS if gpu.placement_verified]


@st.composite
def _layouts(draw: st.DrawFn) -> tuple[GpuModel, dict[str, int]]:
    gpu = draw(st.sampled_from(VERIFIED))
    counts = draw(st.lists(st.integers(0, 4), min_size=len(gpu.profiles), max_size=len(gpu.profiles)))
    return gpu, dict(zip(gpu.profile_names(), counts, strict=True))


@given(_layouts())
def test_placements_never_overlap(case: tuple[GpuModel, dict[str, int]]) -> None:
    gpu, layout = case
    placement = place_layout(gpu, layout)
    if not placement.ok:
        assert placement.reason and not placement.slots
        return
    assert Counter(name for name, _ in placement.slots) == Counter({k: v for k, v in layout.items() if v})
    used: list[int] = []
    for name, start in placement.slots:
        profile = gpu.profile(name)
        assert profile is not None and profile.placement_starts is not None and profile.placement_size is not None
        assert start in profile.placement_starts
        used.extend(range(start, start + profile.placement_size))
    assert len(used) == len(set(used))
    assert max(used) < (gpu.memory_slices or 0)
    assert _media_count(gpu, layout) <= 1
