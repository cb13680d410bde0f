"""The README's promises: its two set-up commands, the CI command, the output it shows and its Python session."""

from __future__ import annotations

import doctest
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _first_block() -> list[str]:
    block = re.search(r"```sh\n(.*?)```", README, re.S)
    assert block is not None
    return [line for line in block.group(1).splitlines() if line and not line.startswith("#")]


def test_first_screen_has_exactly_two_setup_commands() -> None:
    assert README.index("```sh") < 1500, "the set-up commands must be on the first screen"
    commands = _first_block()
    assert len(commands) == 2
    assert "gpustack-gen render examples/fleet.yaml" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _first_block()[1] in ci.splitlines()


def test_error_example_is_real_output() -> None:
    shown = re.search(r"\$ gpustack-gen validate fleet.yaml\n(.*?)```", README, re.S)
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
    assert result.stderr.replace(fleet.name, "fleet.yaml") == shown.group(1)


def test_diff_example_is_real_output() -> None:
    shown = re.search(r"```text\n(gpustack-gen diff: .*?)\n```", README, re.S)
    assert shown is not None
    golden = (ROOT / "tests" / "diff" / "golden" / "example.txt").read_text(encoding="utf-8")
    assert golden.startswith(shown.group(1) + "\n")


def test_python_session_is_real_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's ``pycon`` session, run with doctest from a folder that holds the bundled example."""
    shown = re.search(r"```pycon\n(.*?)```", README, re.S)
    assert shown is not None
    (tmp_path / "examples").mkdir()
    shutil.copy(ROOT / "examples" / "fleet.yaml", tmp_path / "examples" / "fleet.yaml")
    monkeypatch.chdir(tmp_path)
    session = doctest.DocTestParser().get_doctest(shown.group(1), {}, "README.md", "README.md", 0)
    report: list[str] = []
    runner = doctest.DocTestRunner()
    runner.run(session, out=report.append)
    assert runner.failures == 0, "".join(report)
    assert runner.tries == len(session.examples) >= 10
    assert (tmp_path / "rendered" / "prod" / "capacity.yaml").is_file()


def test_intent_file_example_loads_and_every_sharing_entry_is_used() -> None:
    from gpustack_gen import load_fleet

    shown = re.search(r"## The intent file.*?```yaml\n(.*?)```", README, re.S)
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


def _hami_section() -> str:
    found = re.search(r"## Memory-isolated sharing with HAMi\n(.*?)\n## ", README, re.S)
    assert found is not None
    return found.group(1)


def test_hami_section_shows_the_real_example_files() -> None:
    """Each block names its file on its first line and shows text that file has (from its first key on)."""
    blocks = re.findall(r"```yaml\n# (examples/hami/\S+)[^\n]*\n(.*?)```", _hami_section(), re.S)
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


def test_hami_section_shows_the_real_plan() -> None:
    from gpustack_gen import load_fleet
    from gpustack_gen.plan import plan_fleets
    from gpustack_gen.plan.report import render_text

    shown = re.search(
        r"```text\n\$ gpustack-gen plan examples/fleet.yaml examples/hami/fleet.yaml[^\n]*\n(.*?)```",
        _hami_section(),
        re.S,
    )
    assert shown is not None
    old = load_fleet(ROOT / "examples" / "fleet.yaml", name="examples/fleet.yaml")
    new = load_fleet(ROOT / "examples" / "hami" / "fleet.yaml", name="examples/hami/fleet.yaml")
    real = render_text(plan_fleets(old, new, rendered="rendered"))
    assert shown.group(1).startswith("stage: ")
    assert "\n" + shown.group(1) + "\n" in real


def test_hami_section_has_the_trade_off_table() -> None:
    header = next(line for line in _hami_section().splitlines() if line.startswith("| | "))
    assert [cell.strip() for cell in header.strip("|").split("|")][1:] == ["time-slicing", "MPS", "MIG", "HAMi"]


def test_dra_section_shows_the_examples_real_output() -> None:
    """Each file quoted in "Dynamic Resource Allocation" is a document of the committed examples/dra render (which
    tests/test_examples.py holds to a fresh render), and the fleet lines it shows are the example's."""
    from gpustack_gen.yamlio.load import load_plain

    section = README.split("## Dynamic Resource Allocation", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```yaml\n(.*?)```", section, re.S)
    quoted = [block for block in blocks if block.startswith("# examples/dra/rendered/")]
    assert len(quoted) >= 3
    for block in quoted:
        path = ROOT / block.splitlines()[0].removeprefix("# ")
        documents = [doc for doc in load_all(path) if doc is not None]
        assert load_plain(block) in documents, path
    (cluster,) = load_plain(blocks[0])
    example = load_plain((ROOT / "examples" / "dra" / "fleet.yaml").read_text(encoding="utf-8"))["clusters"][0]
    assert cluster == {key: example[key] for key in cluster}


def load_all(path: Path) -> list[object]:
    from ruamel.yaml import YAML

    return list(YAML(typ="safe", pure=True).load_all(path.read_text(encoding="utf-8")))
