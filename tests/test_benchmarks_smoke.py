"""Smoke test of the benchmark harness: ``python -m benchmarks --quick`` runs and prints every figure.

It runs 1- and 10-cluster fleets once, in a subprocess, so that the harness cannot rot. It asserts
nothing about time: timings on a shared CI machine are not a pass/fail signal.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # benchmarks/ is not part of the installed package
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks.fleetgen import coverage, generate_fleet, generate_mixed_fleet, perturb  # noqa: E402

# Every row the quick table must print (a prefix of its first column).
FIGURE_ROWS = (
    "cold start: gpustack-gen --help",
    "cold start: gpustack-gen validate",
    "cold start: validate vs floor + one pydantic model",
    "render 1 cluster",
    "render 10 clusters",
    "render linearity t(10)/t(1)",
    "load linearity t(10)/t(1)",
    "peak RSS at 10 clusters",
    "validation per ConfigMap",
    "diff 2 fleets x 10 clusters",
    "plan 2 fleets x 10 clusters",
    "write 10 clusters: fresh render",
    "write 10 clusters: re-render, nothing changed",
    "write 10 clusters: re-render, one cluster changed",
    "whole cold validate of the bundled example at 10 clusters",
    "whole render --check at 10 clusters",
    "whole diff, 1 cluster changed at 10 clusters",
    "whole plan, 1 cluster changed at 10 clusters",
    "whole fresh render at 10 clusters",
    "whole commands' peak RSS at 10 clusters",
)
# Rows that may say n/a instead of a ratio, and why.
OPTIONAL = {
    "validation per ConfigMap": "n/a (kubernetes-validate not installed)",
    "diff 2 fleets x 10 clusters": "n/a (diff not available)",
    "plan 2 fleets x 10 clusters": "n/a (plan not available)",
}
RATIO = re.compile(r"^\d+(\.\d+)?x?( faster)?$")


def test_quick_run_prints_every_figure_with_a_ratio() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--markdown"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        for line in done.stdout.splitlines()
        if line.startswith("| ") and not line.startswith("| figure ")
    ]
    assert all(len(row) == 6 for row in rows), rows
    for figure in FIGURE_ROWS:
        matching = [row for row in rows if row[0].startswith(figure)]
        assert len(matching) == 1, f"{figure!r} not printed once in:\n{done.stdout}"
        _, _, _, ratio, goal, _ = matching[0]
        assert goal, figure
        if RATIO.match(ratio):
            continue
        assert figure in OPTIONAL and OPTIONAL[figure] in " ".join(matching[0]), f"{figure}: no ratio in {matching[0]}"
    assert not [row for row in rows if row[1].startswith("error:")], done.stdout


@pytest.mark.parametrize("clusters", [1, 10, 100, 1000])
def test_generated_fleet_loads(clusters: int) -> None:
    from gpustack_gen import load_fleet

    mapping = generate_fleet(clusters)
    fleet = load_fleet(mapping)
    assert len(fleet.clusters) == clusters
    assert all(len(c.pools) == 8 and len(c.workloads) == 20 for c in fleet.clusters)
    assert generate_fleet(clusters) == mapping  # deterministic from the seed
    if clusters >= 10:
        found = coverage(mapping)
        assert found["strategies"] == {"none", "time-slicing", "mps", "mig"}
        assert found["mig"] == {"layout", "config"}
        assert found["mig_strategies"] == {"single", "mixed"}
        from gpustack_gen.catalog import GPUS

        assert found["gpus"] == {gpu.id for gpu in GPUS}


def test_perturbed_fleet_loads_and_differs() -> None:
    from gpustack_gen import load_fleet

    old = generate_fleet(100)
    new, changed = perturb(old, 0.01)
    assert changed == 8
    assert new != old
    load_fleet(new)


def test_mixed_fleet_loads_with_every_backend() -> None:
    from gpustack_gen import load_fleet

    mapping = generate_mixed_fleet(20)
    fleet = load_fleet(mapping)
    backends = [c.backend for c in fleet.clusters]
    assert (backends.count("gpu-operator"), backends.count("hami"), backends.count("dra")) == (16, 2, 2)
    assert generate_mixed_fleet(20) == mapping
