"""The plans docs/guides show are real output (UPDATE_GOLDEN=1 rewrites them)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from gpustack_gen import load_fleet
from gpustack_gen.plan import plan_fleets
from gpustack_gen.plan.report import ReportContext, render_text

ROOT = Path(__file__).resolve().parent.parent
GUIDES = ROOT / "docs" / "guides"
EXAMPLE = (ROOT / "examples" / "fleet.yaml").read_text(encoding="utf-8")
CHANGES = ROOT / "tests" / "changes"
BLOCK = re.compile(r"(<!-- plan: (?P<name>[\w-]+) -->\n```text\n)(?P<body>.*?)(```\n<!-- /plan -->)", re.S)


def _two_clusters() -> str:
    new = EXAMPLE.replace(
        "tesla-t4: {strategy: time-slicing, replicas: 4}", "tesla-t4: {strategy: time-slicing, replicas: 3}"
    ).replace("tesla-t4: {replicas: 5}", "tesla-t4: {replicas: 6}")
    result = plan_fleets(
        load_fleet(EXAMPLE), load_fleet(new), old_label="origin/main:fleet.yaml", new_label="fleet.yaml"
    )
    context = ReportContext(render_command="gpustack-gen render fleet.yaml --out rendered")
    return "$ gpustack-gen plan --base origin/main fleet.yaml\n" + render_text(result, context)


def _change(kind: str) -> str:
    folder = CHANGES / kind
    old = load_fleet(folder / "old.yaml", name="old.yaml")
    new = load_fleet(folder / "new.yaml", name="new.yaml")
    context = ReportContext(render_command="gpustack-gen render new.yaml --out rendered")
    return "$ gpustack-gen plan old.yaml new.yaml\n" + render_text(plan_fleets(old, new), context)


OUTPUTS = {
    "several-clusters": _two_clusters,
    "argocd": lambda: _change("argocd-mig-strategy"),
    "flux": lambda: _change("flux-mig-strategy"),
}


@pytest.mark.parametrize("guide", ["several-clusters.md", "gitops.md"])
def test_the_guide_shows_real_plans(guide: str) -> None:
    path = GUIDES / guide
    text = path.read_text(encoding="utf-8")
    real = BLOCK.sub(lambda m: m.group(1) + OUTPUTS[m.group("name")]() + m.group(4), text)
    assert BLOCK.search(text) is not None
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(real, encoding="utf-8")
        return
    assert text == real, f"{path} shows stale plans (UPDATE_GOLDEN=1 rewrites them)"
