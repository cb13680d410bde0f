"""The plans the plan page shows (docs/commands/plan.md) are real output, and they pass the model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from golden import assert_shown
from sim.simulator import Simulation

from gpustack_gen import load_fleet
from gpustack_gen.plan import plan_fleets
from gpustack_gen.plan.report import ReportContext, render_text

ROOT = Path(__file__).resolve().parent.parent.parent
PAGE_FILE = ROOT / "docs" / "commands" / "plan.md"
PAGE = PAGE_FILE.read_text(encoding="utf-8")
EXAMPLE = (ROOT / "examples" / "fleet.yaml").read_text(encoding="utf-8")
OLD_LAYOUT = '{"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 2}'
CHANGES = {
    # prod's T4s from 4 to 5 replicas (the fleet default; stage sets its own 5).
    "prod": [("tesla-t4: {strategy: time-slicing, replicas: 4}", "tesla-t4: {strategy: time-slicing, replicas: 5}")],
    # one 1g.5gb instance less per A100 of train, the old layout kept retired.
    "train": [
        ('"2g.10gb": 1, "1g.5gb": 2}', '"2g.10gb": 1, "1g.5gb": 1}'),
        (
            "  - name: train\n",
            f"  - name: train\n    retired: {{migConfigs: [{{gpu: a100-40gb, layout: {OLD_LAYOUT}}}]}}\n",
        ),
    ],
}
SHOWN = re.findall(r"\$ gpustack-gen plan --base origin/main examples/fleet.yaml\n(.*?)\n```", PAGE, re.S)


def _edited(cluster: str) -> str:
    text = EXAMPLE
    for old, new in CHANGES[cluster]:
        assert old in text, f"examples/fleet.yaml changed: {old!r} not found"
        text = text.replace(old, new, 1)
    return text


@pytest.mark.parametrize(("cluster", "index"), [("prod", 0), ("train", 1)])
def test_docs_plan_is_real_output(cluster: str, index: int) -> None:
    result = plan_fleets(
        load_fleet(EXAMPLE),
        load_fleet(_edited(cluster)),
        old_label="origin/main:examples/fleet.yaml",
        new_label="examples/fleet.yaml",
    )
    context = ReportContext(render_command="gpustack-gen render examples/fleet.yaml --out rendered")
    assert [c.name for c in result.clusters] == [cluster]
    assert_shown(SHOWN[index], render_text(result, context).rstrip("\n"), PAGE_FILE)


@pytest.mark.parametrize("cluster", ["prod", "train"])
def test_docs_plan_keeps_gpus_alive_on_the_model(cluster: str, upstream: Path, tmp_path: Path) -> None:
    Simulation(upstream, tmp_path, load_fleet(EXAMPLE), load_fleet(_edited(cluster)), cluster).run()
