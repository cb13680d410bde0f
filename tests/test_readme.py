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
