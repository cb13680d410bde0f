"""What every registered backend must bring besides its code: the contract a new backend is held to.

A backend is registered once per layer (the model's semantics, the compilers, verify's hook). For each
name there, the repository must hold an example fleet with a cluster on it, a change case to and from
``gpu-operator`` (every case under ``tests/changes`` is replayed on the rollout model), healthy and broken
``verify`` data (a scenario in :data:`scenarios.SCENARIOS`, run by the contract test) and a
docs page. :func:`gaps` names what is missing, so a stub backend fails with a list of what to add.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from gpustack_gen import FleetError, load_fleet
from gpustack_gen.model.backends import DEFAULT_BACKEND

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Repository:
    """Which backends the repository's examples, change cases and docs use, read once."""

    examples: Mapping[str, tuple[str, ...]]  # backend -> example fleets with a cluster on it
    moves: frozenset[tuple[str, str]]  # (old backend, new backend) of one cluster in some change case
    docs: frozenset[str]  # backends with a page under docs/backends

    @classmethod
    def read(cls, root: Path = ROOT) -> Repository:
        examples: dict[str, list[str]] = {}
        for fleet in sorted((root / "examples").rglob("fleet.yaml")):
            if "rendered" in fleet.parts:
                continue
            for backend in _backends(fleet).values():
                examples.setdefault(backend, []).append(str(fleet.relative_to(root)))
        moves: set[tuple[str, str]] = set()
        for case in sorted((root / "tests" / "changes").iterdir()):
            old, new = _backends(case / "old.yaml"), _backends(case / "new.yaml")
            moves.update((old[name], new[name]) for name in old.keys() & new.keys() if old[name] != new[name])
        docs = frozenset(page.stem for page in (root / "docs" / "backends").glob("*.md"))
        return cls({k: tuple(v) for k, v in examples.items()}, frozenset(moves), docs)


def _backends(fleet: Path) -> dict[str, str]:
    """Each cluster's backend in a fleet file; none for a file that is missing or does not load."""
    if not fleet.is_file():
        return {}
    try:
        loaded = load_fleet(fleet)
    except FleetError:
        return {}
    return {cluster.name: cluster.backend for cluster in loaded.clusters}


def gaps(backend: str, repository: Repository, verify_scenarios: Iterable[str]) -> list[str]:
    """What ``backend`` still lacks of the contract, as instructions; empty when it meets it."""
    missing: list[str] = []
    if backend not in repository.examples:
        missing.append(f"an example fleet under examples/ with a cluster on backend {backend}")
    if backend != DEFAULT_BACKEND:
        for old, new in ((backend, DEFAULT_BACKEND), (DEFAULT_BACKEND, backend)):
            if (old, new) not in repository.moves:
                missing.append(f"a change case under tests/changes moving a cluster from {old} to {new}")
    if backend not in set(verify_scenarios):
        missing.append(f"healthy and broken verify data: a scenario for {backend} in tests/verify/scenarios.py")
    if backend not in repository.docs:
        missing.append(f"a docs page docs/backends/{backend}.md")
    return missing
