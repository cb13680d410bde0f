"""Backend dra with the Operator's CDI switch off: accepted where the runtime reads CDI by default (CRI-O 1.27+,
containerd 2.0+; dra-driver-nvidia-gpu@v0.4.1 docs/prerequisites.md:14), refused on older runtimes, a warning where
the fleet does not state the runtime's version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from gpustack_gen import FleetError, load_fleet

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dra" / "fleet.yaml"


def dra_fleet(runtime: str, version: str | None) -> dict[str, Any]:
    data = YAML(typ="safe").load(EXAMPLE.read_text(encoding="utf-8"))
    data["defaults"]["operator"]["cdi"] = {"enabled": False}
    for cluster in data["clusters"]:
        cluster["containerRuntime"] = runtime
        if version is not None:
            cluster["containerRuntimeVersion"] = version
    return data


def messages(data: dict[str, Any]) -> tuple[list[str], list[str]]:
    try:
        fleet = load_fleet(data)
    except FleetError as error:
        return [p.message for p in error.problems if p.severity.value == "error"], []
    return [], [w.message for w in fleet.warnings]


@pytest.mark.parametrize(("runtime", "version"), [("cri-o", "1.27.0"), ("cri-o", "1.31.4"), ("containerd", "2.0.2")])
def test_a_cdi_native_runtime_needs_no_cdi_switch(runtime: str, version: str) -> None:
    errors, warnings = messages(dra_fleet(runtime, version))
    assert errors == [] and not any("through CDI" in w for w in warnings)


@pytest.mark.parametrize(("runtime", "version"), [("cri-o", "1.26.3"), ("containerd", "1.7.24")])
def test_an_older_runtime_is_refused(runtime: str, version: str) -> None:
    errors, _ = messages(dra_fleet(runtime, version))
    assert any(f"runs {runtime} {version}, which reads CDI by default only from" in e for e in errors), errors


@pytest.mark.parametrize("runtime", ["cri-o", "containerd"])
def test_an_unknown_version_warns(runtime: str) -> None:
    errors, warnings = messages(dra_fleet(runtime, None))
    assert errors == []
    assert any("the fleet does not say which version the nodes run" in w for w in warnings), warnings


def test_a_runtime_version_that_is_not_one_is_refused() -> None:
    errors, _ = messages(dra_fleet("cri-o", "latest"))
    assert errors
