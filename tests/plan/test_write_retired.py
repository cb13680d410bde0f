"""``gpustack-gen plan --write-retired``: the written fleet (byte-exact), the plan it gives, and each refusal
(exit 2, the fleet file untouched)."""

from __future__ import annotations

import difflib
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from golden import assert_golden

from gpustack_gen import load_fleet
from gpustack_gen.change.sides import Side
from gpustack_gen.cli import main
from gpustack_gen.plan.write_retired import RetiredWriteError, with_retired, write_retired, write_retired_sides

HERE = Path(__file__).resolve().parent / "write-retired"
CHANGE = Path(__file__).resolve().parent.parent / "changes" / "mig-layout-unretained"
GIT = shutil.which("git")
NEEDED = {"prod": {"migConfigs": [{"gpu": "a100-40gb", "layout": {"3g.20gb": 1}}]}}


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def fleet_copy(tmp_path: Path, source: Path = HERE / "new.yaml") -> Path:
    target = tmp_path / "fleet.yaml"
    shutil.copyfile(source, target)
    return target


def test_the_written_fleet_keeps_every_byte_and_gains_the_entry(tmp_path: Path) -> None:
    fleet = fleet_copy(tmp_path)
    before = fleet.read_text(encoding="utf-8")

    result = run("plan", str(CHANGE / "old.yaml"), str(fleet), "--write-retired")

    assert result.exit_code == 0, result.output
    assert f"wrote the retired entries cluster prod needs to {fleet}" in result.stderr
    assert "prod: 13 steps" in result.stdout  # planned with the entry, not refused
    after = fleet.read_text(encoding="utf-8")
    diff = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), "before", "after", n=1))
    assert_golden(diff, HERE / "written.diff")
    assert not [line for line in diff.splitlines()[2:] if line.startswith("-")]  # only additions


def test_a_second_run_writes_nothing_and_plans_the_same(tmp_path: Path) -> None:
    fleet = fleet_copy(tmp_path)
    first = run("plan", str(CHANGE / "old.yaml"), str(fleet), "--write-retired")
    written = fleet.read_bytes()

    second = run("plan", str(CHANGE / "old.yaml"), str(fleet), "--write-retired")

    assert second.exit_code == 0 and "wrote" not in second.stderr
    assert second.stdout == first.stdout and fleet.read_bytes() == written


def test_without_the_flag_the_change_is_refused_and_the_file_kept(tmp_path: Path) -> None:
    fleet = fleet_copy(tmp_path)
    before = fleet.read_bytes()

    result = run("plan", str(CHANGE / "old.yaml"), str(fleet))

    assert result.exit_code == 1 and "retired: {migConfigs:" in result.stdout
    assert fleet.read_bytes() == before


def test_a_rendered_folder_as_new_is_refused(tmp_path: Path) -> None:
    rendered = tmp_path / "rendered"
    assert run("render", str(CHANGE / "new.yaml"), "--out", str(rendered)).exit_code == 0

    result = run("plan", str(CHANGE / "old.yaml"), str(rendered), "--write-retired")

    assert result.exit_code == 2
    assert "--write-retired needs OLD and NEW as fleet files, NEW one in the working tree" in result.stderr


def test_a_fleet_read_from_git_is_refused() -> None:
    old, new = load_fleet(CHANGE / "old.yaml"), load_fleet(CHANGE / "new.yaml")
    with pytest.raises(RetiredWriteError, match="NEW one in the working tree"):
        write_retired_sides(Side.of_fleet(old), Side.of_fleet(new, "origin/main:fleet.yaml"))


def test_a_file_the_round_trip_would_reformat_is_refused(tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    text = (CHANGE / "new.yaml").read_text(encoding="utf-8").replace("{pool: t4}", "{ pool: t4 }")
    fleet.write_text(text, encoding="utf-8")

    result = run("plan", str(CHANGE / "old.yaml"), str(fleet), "--write-retired")

    assert result.exit_code == 2 and "its layout would change when rewritten" in result.stderr
    assert fleet.read_text(encoding="utf-8") == text


def test_an_unreadable_fleet_is_refused(tmp_path: Path) -> None:
    old, new = load_fleet(CHANGE / "old.yaml"), load_fleet(CHANGE / "new.yaml")
    with pytest.raises(RetiredWriteError, match="cannot read it"):
        write_retired(tmp_path / "gone.yaml", old, new)


def test_an_entry_that_changes_another_cluster_is_refused(tmp_path: Path) -> None:
    """A cluster merged from the changed one's anchor would gain its retired entry too."""
    text = (CHANGE / "new.yaml").read_text(encoding="utf-8").replace("  - name: prod\n", "  - &prod\n    name: prod\n")
    text += "  - <<: *prod\n    name: staging\n    kubeContext: staging\n"
    old_text = (
        (CHANGE / "old.yaml").read_text(encoding="utf-8").replace("  - name: prod\n", "  - &prod\n    name: prod\n")
    )
    old_text += "  - <<: *prod\n    name: staging\n    kubeContext: staging\n"
    fleet, old_file = tmp_path / "fleet.yaml", tmp_path / "old.yaml"
    fleet.write_text(text, encoding="utf-8")
    old_file.write_text(old_text, encoding="utf-8")

    result = run("plan", str(old_file), str(fleet), "--write-retired", "--cluster", "prod")

    assert result.exit_code == 2, result.output
    assert "the retired entries could not be placed as the change needs them" in result.stderr
    assert fleet.read_text(encoding="utf-8") == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("clusters: [\n", "not YAML"),
        ("clusters: {prod: {}}\n", "no clusters list"),
        ("clusters:\n  - name: staging\n", "cluster prod is not written in this file"),
        ("clusters:\n  - name: prod\n    retired: [a]\n", r"clusters.prod.retired is not a mapping"),
        ("clusters:\n  - name: prod\n    retired:\n      migConfigs: {}\n", r"retired.migConfigs is not a list"),
        (
            "clusters:\n  - name: prod\n    retired:\n      devicePluginConfigs: []\n",
            r"retired.devicePluginConfigs is not a mapping",
        ),
    ],
)
def test_an_entry_that_cannot_be_placed_is_refused(text: str, message: str) -> None:
    needed = {**NEEDED, "prod": {**NEEDED["prod"], "devicePluginConfigs": {"old-key": {"strategy": "none"}}}}
    if "devicePluginConfigs" not in text:
        needed = NEEDED
    with pytest.raises(RetiredWriteError, match=message):
        with_retired(text, "fleet.yaml", needed)


def test_entries_merge_into_a_retired_block_the_file_has() -> None:
    text = "clusters:\n  - name: prod  # kept\n    retired:\n      migConfigs:\n        - {gpu: a100-40gb, config: all-1g.5gb}\n"

    written = with_retired(text, "fleet.yaml", NEEDED)

    assert written == text + "        - gpu: a100-40gb\n          layout: {3g.20gb: 1}\n"


def test_an_entry_the_model_rejects_is_a_bug_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fleet = fleet_copy(tmp_path)
    before = fleet.read_bytes()
    monkeypatch.setattr(
        "gpustack_gen.plan.write_retired.retired_entries", lambda change: {"migConfigs": [{"gpu": "no-such-gpu"}]}
    )

    result = run("plan", str(CHANGE / "old.yaml"), str(fleet), "--write-retired")

    assert result.exit_code == 3 and "internal error: generated retired entries" in result.stderr
    assert fleet.read_bytes() == before


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_with_base_the_working_file_gains_the_entry_and_git_is_untouched(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    identity = ["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"]
    fleet = root / "fleet.yaml"
    shutil.copyfile(CHANGE / "old.yaml", fleet)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run(["git", *identity, "add", "."], cwd=root, check=True)
    subprocess.run(["git", *identity, "commit", "-q", "-m", "base"], cwd=root, check=True)
    shutil.copyfile(CHANGE / "new.yaml", fleet)

    result = run("plan", "--base", "HEAD", str(fleet), "--write-retired")

    assert result.exit_code == 0, result.output
    assert load_fleet(fleet).clusters == load_fleet(CHANGE.parent / "mig-layout" / "new.yaml").clusters
    committed = subprocess.run(["git", "show", "HEAD:fleet.yaml"], cwd=root, check=True, capture_output=True).stdout
    assert committed == (CHANGE / "old.yaml").read_bytes()
