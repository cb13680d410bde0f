"""Every registered backend meets the contract; a stub backend registered in every layer does not."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from backend_contract import Repository, gaps
from scenarios import SCENARIOS
from verify_helpers import copy_state

from gpustack_gen import load_fleet
from gpustack_gen.compile.backends import BACKENDS
from gpustack_gen.errors import Severity
from gpustack_gen.model.backends import SEMANTICS
from gpustack_gen.verify import read_state_dir, verify_cluster
from gpustack_gen.verify.backends import VERIFY_BACKENDS

REGISTERED = sorted(set(SEMANTICS) | set(BACKENDS) | set(VERIFY_BACKENDS))


@pytest.fixture(scope="module")
def repository() -> Repository:
    return Repository.read()


def test_every_layer_registers_the_same_backends() -> None:
    assert set(SEMANTICS) == set(BACKENDS) == set(VERIFY_BACKENDS)


@pytest.mark.parametrize("backend", REGISTERED)
def test_the_backend_brings_an_example_change_cases_verify_data_and_a_page(
    backend: str, repository: Repository
) -> None:
    assert gaps(backend, repository, SCENARIOS) == []


@pytest.mark.parametrize("backend", sorted(SCENARIOS))
def test_the_backend_scenario_verifies_clean_when_healthy_and_fails_when_broken(backend: str, tmp_path: Path) -> None:
    scenario = SCENARIOS[backend]
    cluster = load_fleet(scenario.example).cluster(scenario.cluster)
    assert cluster is not None and cluster.backend == backend
    label = str(scenario.example)
    healthy = verify_cluster(
        cluster, read_state_dir(copy_state(scenario.healthy, tmp_path / "ok"), cluster), fleet_label=label
    )
    assert [f.message for f in healthy.findings if f.severity is Severity.ERROR] == []
    broken_state = read_state_dir(copy_state(scenario.healthy, tmp_path / "broken", scenario.broken), cluster)
    assert verify_cluster(cluster, broken_state, fleet_label=label).count(Severity.ERROR) > 0


def test_a_stub_backend_in_every_registry_fails_the_contract_naming_each_missing_part(
    repository: Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    stub = SimpleNamespace(NAME="stub")
    for registry in (SEMANTICS, BACKENDS, VERIFY_BACKENDS):
        monkeypatch.setitem(registry, "stub", stub)  # type: ignore[arg-type]
    registered = sorted(set(SEMANTICS) | set(BACKENDS) | set(VERIFY_BACKENDS))
    failing = {name: gaps(name, repository, SCENARIOS) for name in registered}
    assert {name: missing for name, missing in failing.items() if missing} == {
        "stub": [
            "an example fleet under examples/ with a cluster on backend stub",
            "a change case under tests/changes moving a cluster from stub to gpu-operator",
            "a change case under tests/changes moving a cluster from gpu-operator to stub",
            "healthy and broken verify data: a scenario for stub in tests/verify/scenarios.py",
            "a docs page docs/backends/stub.md",
        ]
    }
