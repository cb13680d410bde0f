"""``plan --write-retired`` on every change kind the retention rule refuses: the written fleet plans without
errors, prunes none of the entries it gained, and the plan keeps GPUs alive on the model of the controllers."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from sim import extras
from sim.simulator import Simulation

from gpustack_gen import load_fleet
from gpustack_gen.change import analyse
from gpustack_gen.change.context import ClusterChange
from gpustack_gen.change.rules.retention import missing
from gpustack_gen.plan.write_retired import needed_retired, write_retired
from gpustack_gen.workdir import Paths

CHANGES = Path(__file__).resolve().parent.parent / "changes"
REFUSED = sorted(
    p.name
    for p in CHANGES.iterdir()
    if p.is_dir() and needed_retired(load_fleet(p / "old.yaml"), load_fleet(p / "new.yaml"))
)


def test_the_unretained_mig_layout_change_is_among_the_kinds() -> None:
    assert "mig-layout-unretained" in REFUSED


@pytest.mark.parametrize("kind", REFUSED)
def test_the_written_fleet_plans_and_keeps_gpus_alive(kind: str, upstream: Path, tmp_path: Path) -> None:
    folder = CHANGES / kind
    fleet_file = tmp_path / "new.yaml"
    shutil.copyfile(folder / "new.yaml", fleet_file)
    old = load_fleet(folder / "old.yaml", name="old.yaml")
    unwritten = load_fleet(fleet_file, name="new.yaml")
    added = write_retired(fleet_file, old, unwritten)
    new = load_fleet(fleet_file, name="new.yaml")

    assert added
    for name in added:
        kept = {value for _, _, value, _ in missing(ClusterChange(old.cluster(name), unwritten.cluster(name), Paths()))}
        analysis = analyse(old.cluster(name), new.cluster(name))
        assert not analysis.errors, [e.message for e in analysis.errors]
        pruned = {item for o in analysis.outcomes if o.finding.rule == "prune" for item in o.finding.items}
        assert kept and not kept & pruned
    if (folder / "not-simulated.txt").is_file():
        return
    report = Simulation(upstream, tmp_path / "sim", old, new, "prod", extras.load(folder / "cluster.yaml")).run()
    assert report.steps_run > 0


HAND_WRITTEN = sorted(
    p.name
    for p in CHANGES.iterdir()
    if p.is_dir() and p.name not in REFUSED and "retired:" in (p / "new.yaml").read_text()
)


def _without_retired(text: str) -> str:
    """The fleet as the user first wrote it: the change without its hand-written ``retired`` entries."""
    yaml = YAML(typ="rt", pure=True)
    yaml.width = 1 << 16
    yaml.indent(mapping=2, sequence=4, offset=2)
    data = yaml.load(text)
    for cluster in data["clusters"]:
        cluster.pop("retired", None)
    stream = io.StringIO()
    yaml.dump(data, stream)
    return stream.getvalue()


@pytest.mark.parametrize("kind", HAND_WRITTEN)
def test_the_written_entries_are_the_ones_written_by_hand(kind: str, tmp_path: Path) -> None:
    """A MIG layout change, leaving MIG, removing or renaming a pool: what the kind's new.yaml keeps by hand."""
    folder = CHANGES / kind
    fleet_file = tmp_path / "new.yaml"
    fleet_file.write_text(_without_retired((folder / "new.yaml").read_text(encoding="utf-8")), encoding="utf-8")
    old = load_fleet(folder / "old.yaml", name="old.yaml")

    assert write_retired(fleet_file, old, load_fleet(fleet_file, name="new.yaml"))

    assert load_fleet(fleet_file, name="new.yaml").clusters == load_fleet(folder / "new.yaml", name="new.yaml").clusters
