"""Can a per-GPU MIG layout (profile -> count) really be created on a model?

A GPU instance occupies memory slices ``[start, start + size)`` at one of its profile's allowed starts, and
instances may not overlap (NVML ``nvmlGpuInstancePlacement_t``); at most one ``+me`` instance fits per GPU.
Slice totals that fit are not enough in general, so verified models get a backtracking placement search.
Models without a citable placement table fall back to the slice sums, which are exact on every verified
table (research note mig-placement.md, sections 1, 3 and 6).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from gpustack_gen.catalog.lookup import suggest_profiles
from gpustack_gen.catalog.models import GpuModel, MigProfile


@dataclass(frozen=True, slots=True)
class Placement:
    """The verdict on one layout.

    ``layout`` is the requested layout without zero counts, in catalog profile order. ``slots`` holds one
    ``(profile, start)`` per instance, by start, when the layout is ok and the model's placement table is
    verified; it is empty otherwise. ``reason`` says why a layout is not ok.
    """

    ok: bool
    verified: bool
    layout: tuple[tuple[str, int], ...] = ()
    slots: tuple[tuple[str, int], ...] = ()
    reason: str = ""


def place_layout(gpu: GpuModel, layout: Mapping[str, int]) -> Placement:
    """Check ``layout`` against ``gpu`` and, on a verified model, find a placement for every instance."""
    verified = gpu.placement_verified
    if not gpu.mig_capable:
        return Placement(ok=False, verified=False, reason=f"{gpu.name} does not support MIG")
    unknown = [name for name in layout if gpu.profile(name) is None]
    if unknown:
        return Placement(ok=False, verified=verified, reason=_unknown_reason(gpu, unknown))
    negative = [f"{name}: {count}" for name, count in layout.items() if count < 0]
    if negative:
        return Placement(
            ok=False, verified=verified, reason=f"instance counts must be 0 or more ({', '.join(negative)})"
        )
    counts = tuple((p, layout[p.name]) for p in gpu.profiles if layout.get(p.name, 0) > 0)
    normalised = tuple((p.name, n) for p, n in counts)

    def fail(reason: str) -> Placement:
        return Placement(ok=False, verified=verified, layout=normalised, reason=reason)

    if not counts:
        return fail("a MIG layout needs at least one instance")
    reason = _check_limits(gpu, counts)
    if reason:
        return fail(reason)
    if not verified:
        return Placement(ok=True, verified=False, layout=normalised)
    slots, reason = _search(gpu, counts)
    if slots is None:
        return fail(reason)
    return Placement(ok=True, verified=True, layout=normalised, slots=slots)


def describe(placement: Placement) -> str:
    """One line for users: the slots such as ``2g@0 2g@2 3g@4``, or why the layout fails."""
    if not placement.ok:
        return f"not placeable: {placement.reason}"
    if not placement.slots:
        counts = " + ".join(f"{name} x{count}" for name, count in placement.layout)
        return f"{counts} (fits the slice totals; placement table unverified)"
    short = _short_names(name for name, _ in placement.slots)
    return " ".join(f"{short[name]}@{start}" for name, start in placement.slots)


def _unknown_reason(gpu: GpuModel, unknown: list[str]) -> str:
    parts = []
    for name in unknown:
        hints = suggest_profiles(gpu, name)
        parts.append(f"{name} (did you mean {' or '.join(hints)}?)" if hints else name)
    plural = "s" if len(unknown) > 1 else ""
    return (
        f"{gpu.name} has no MIG profile{plural} {', '.join(parts)}; its profiles are {', '.join(gpu.profile_names())}"
    )


def _check_limits(gpu: GpuModel, counts: tuple[tuple[MigProfile, int], ...]) -> str:
    """The slice-sum checks: exact on verified tables, and the whole check on unverified ones."""
    media = [(p, n) for p, n in counts if p.has_media_extensions]
    if sum(n for _, n in media) > 1:
        found = ", ".join(f"{p.name} x{n}" for p, n in media)
        return (
            f"more than one media-extension (+me) instance ({found}); "
            "every +me profile takes the GPU's only JPEG/OFA engines, so at most one fits per GPU"
        )
    for profile, count in counts:
        if count > profile.max_instances:
            return (
                f"at most {profile.max_instances} {profile.name} instance(s) fit on one {gpu.name}, "
                f"the layout asks for {count}"
            )
    # Both totals are set on every MIG-capable model (the catalog tests check it).
    assert gpu.compute_slices is not None and gpu.memory_slices is not None
    for unit, total, sizes in (
        ("compute", gpu.compute_slices, [(p, p.compute_slices, n) for p, n in counts]),
        ("memory", gpu.memory_slices, [(p, p.memory_slices, n) for p, n in counts]),
    ):
        needed = sum(size * n for _, size, n in sizes)
        if needed > total:
            terms = ", ".join(f"{p.name} x{n} = {size * n}" for p, size, n in sizes)
            return f"the layout needs {needed} of {total} {unit} slices on {gpu.name} ({terms})"
    return ""


def _search(
    gpu: GpuModel, counts: tuple[tuple[MigProfile, int], ...]
) -> tuple[tuple[tuple[str, int], ...] | None, str]:
    """Backtrack over allowed starts, fewest starts first and largest first on ties (mig-placement.md §1)."""
    instances = [p for p, n in counts for _ in range(n)]
    instances.sort(key=lambda p: (len(_starts(p)), -_size(p), p.name))
    assert gpu.memory_slices is not None
    occupant: list[str | None] = [None] * gpu.memory_slices
    chosen: list[tuple[str, int]] = []
    # The instance the search got stuck on with the most instances already placed, for the error message.
    # At that depth every start is blocked (a free start would have led one level deeper), so the
    # message can name what blocks each one. No symmetry pruning, to keep that true; the search is at
    # most 8 instances on 8 slices.
    deepest: list[tuple[int, str]] = [(-1, "")]

    # Every start + size lies within the memory slices (the catalog tests check it).
    def fits(start: int, size: int) -> bool:
        return all(o is None for o in occupant[start : start + size])

    def place(index: int) -> bool:
        if index == len(instances):
            return True
        profile = instances[index]
        size = _size(profile)
        for start in _starts(profile):
            if not fits(start, size):
                continue
            label = f"{profile.name}@{start}"
            occupant[start : start + size] = [label] * size
            chosen.append((profile.name, start))
            if place(index + 1):
                return True
            chosen.pop()
            occupant[start : start + size] = [None] * size
        if index > deepest[0][0]:
            deepest[0] = (index, _blocked_reason(profile, occupant, fits))
        return False

    if place(0):
        return tuple(sorted(chosen, key=lambda slot: (slot[1], slot[0]))), ""
    return None, deepest[0][1]


def _blocked_reason(profile: MigProfile, occupant: list[str | None], fits: Callable[[int, int], bool]) -> str:
    starts = _starts(profile)
    size = _size(profile)
    blockers = sorted(
        {o for s in starts if not fits(s, size) for o in occupant[s : s + size] if o is not None},
        key=lambda label: int(label.rsplit("@", 1)[1]),
    )
    where = _join(str(s) for s in starts)
    which = "it is" if len(starts) == 1 else ("both are" if len(starts) == 2 else "all are")
    return (
        f"{profile.name} can start only at slice{'s' if len(starts) > 1 else ''} {where}, and {which} "
        f"taken by {_join(blockers)} "
        "(no arrangement of this layout avoids overlapping memory slices)"
    )


def _starts(profile: MigProfile) -> tuple[int, ...]:
    assert profile.placement_starts is not None
    return profile.placement_starts


def _size(profile: MigProfile) -> int:
    assert profile.placement_size is not None
    return profile.placement_size


def _join(items: Iterable[str]) -> str:
    words = list(items)
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _short_names(names: Iterable[str]) -> dict[str, str]:
    """'2g.10gb' -> '2g' when no other profile in the placement shares the compute prefix."""
    unique = sorted(set(names))
    prefixes = [name.split(".", 1)[0] for name in unique]
    return {
        name: prefix if prefixes.count(prefix) == 1 else name for name, prefix in zip(unique, prefixes, strict=True)
    }
