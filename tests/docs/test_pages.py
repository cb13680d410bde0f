"""Pages whose examples are not shell or Python sessions: the text they quote is real output and real files."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from golden import assert_shown
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parent.parent.parent
DOCS = ROOT / "docs"


def _page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def test_error_example_is_real_output() -> None:
    shown = re.search(r"\$ gpustack-gen validate fleet.yaml\n(.*?)```", _page("reference/errors.md"), re.S)
    assert shown is not None
    fleet = ROOT / "tests" / "data" / "readme-errors.yaml"
    result = subprocess.run(
        [sys.executable, "-m", "gpustack_gen", "validate", fleet.name],
        cwd=fleet.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert_shown(shown.group(1), result.stderr.replace(fleet.name, "fleet.yaml"), DOCS / "reference" / "errors.md")


def test_diff_example_is_real_output() -> None:
    shown = re.search(r"```text\n(gpustack-gen diff: .*?)\n```", _page("commands/diff.md"), re.S)
    assert shown is not None
    golden = (ROOT / "tests" / "diff" / "golden" / "example.txt").read_text(encoding="utf-8")
    lines = len(shown.group(1).splitlines())  # the page shows the golden's first lines
    assert_shown(shown.group(1), "\n".join(golden.splitlines()[:lines]), DOCS / "commands" / "diff.md")


def test_fleet_file_example_loads_and_every_sharing_entry_is_used() -> None:
    from gpustack_gen import load_fleet

    shown = re.search(r"```yaml\n(.*?)```", _page("fleet-file.md"), re.S)
    assert shown is not None
    fleet = load_fleet(shown.group(1), name="fleet.yaml")
    assert [w.message.split(":")[0] for w in fleet.warnings] == [
        "time-slicing on pool 't4' in cluster 'prod' gives no memory isolation"
    ]
    (cluster,) = fleet.clusters
    sharing = {pool.name: pool.sharing for pool in cluster.pools}
    t4 = sharing["t4"]
    assert (t4.strategy, t4.replicas, t4.fail_requests_greater_than_one) == ("time-slicing", 5, True)
    assert (sharing["a100"].strategy, sharing["a100"].mig_config, sharing["l4"].strategy) == ("mig", None, "none")


def test_hami_page_shows_the_real_example_files() -> None:
    """Each block names its file on its first line and shows text that file has (from its first key on)."""
    blocks = re.findall(r"```yaml\n# (examples/hami/\S+)[^\n]*\n(.*?)```", _page("backends/hami.md"), re.S)
    assert {path for path, _ in blocks} == {
        "examples/hami/fleet.yaml",
        "examples/hami/rendered/stage/hami-values.yaml",
        "examples/hami/rendered/stage/gpu-operator-values.yaml",
        "examples/hami/rendered/stage/workloads/ml.inference-api.yaml",
        "examples/hami/rendered/stage/capacity.yaml",
    }
    for path, shown in blocks:
        text = (ROOT / path).read_text(encoding="utf-8")
        assert shown in text, path
        if not path.endswith("capacity.yaml"):  # an excerpt; the others are whole from their first key
            assert text.endswith(shown), path


def test_hami_page_shows_the_real_plan() -> None:
    from gpustack_gen import load_fleet
    from gpustack_gen.plan import plan_fleets
    from gpustack_gen.plan.report import render_text

    shown = re.search(
        r"```text\n\$ gpustack-gen plan examples/fleet.yaml examples/hami/fleet.yaml[^\n]*\n(.*?)```",
        _page("backends/hami.md"),
        re.S,
    )
    assert shown is not None
    old = load_fleet(ROOT / "examples" / "fleet.yaml", name="examples/fleet.yaml")
    new = load_fleet(ROOT / "examples" / "hami" / "fleet.yaml", name="examples/hami/fleet.yaml")
    real = render_text(plan_fleets(old, new, rendered="rendered"))
    assert shown.group(1).startswith("stage: ")
    (stage,) = [section for section in real.split("\n\n") if section.startswith("stage: ")]
    assert_shown(shown.group(1), stage + "\n", DOCS / "backends" / "hami.md")


def test_hami_page_has_the_trade_off_table() -> None:
    header = next(line for line in _page("backends/hami.md").splitlines() if line.startswith("| | "))
    assert [cell.strip() for cell in header.strip("|").split("|")][1:] == ["time-slicing", "MPS", "MIG", "HAMi"]


def test_dra_page_shows_the_examples_real_output() -> None:
    """Each file quoted on the DRA page is a document of the committed examples/dra render (which
    tests/test_examples.py holds to a fresh render), and the fleet lines it shows are the example's."""
    from gpustack_gen.yamlio.load import load_plain

    blocks = re.findall(r"```yaml\n(.*?)```", _page("backends/dra.md"), re.S)
    quoted = [block for block in blocks if block.startswith("# examples/dra/rendered/")]
    assert len(quoted) >= 3
    for block in quoted:
        path = ROOT / block.splitlines()[0].removeprefix("# ")
        documents = [doc for doc in YAML(typ="safe", pure=True).load_all(path.read_text(encoding="utf-8")) if doc]
        assert load_plain(block) in documents, path
    (cluster,) = load_plain(blocks[0])
    example = load_plain((ROOT / "examples" / "dra" / "fleet.yaml").read_text(encoding="utf-8"))["clusters"][0]
    assert cluster == {key: example[key] for key in cluster}
