"""``gpustack-gen diff``: arguments, formats, exit codes, and ``--base`` in real git repositories."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from fleets import base, changed, pool
from ruamel.yaml import YAML

from gpustack_gen import load_fleet
from gpustack_gen.cli import main
from gpustack_gen.model import Fleet
from gpustack_gen.model.share import ClusterShare

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed")


def write_fleet(path: Path, data: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        YAML(typ="safe", pure=True).dump(data, handle)
    return path


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def five(data: dict[str, object]) -> None:
    pool(data, "t4")["sharing"].update(replicas=5)


@pytest.fixture
def fleets(tmp_path: Path) -> tuple[Path, Path]:
    return write_fleet(tmp_path / "old.yaml", base()), write_fleet(tmp_path / "new.yaml", changed(five))


def test_identical_inputs_print_no_changes_and_exit_0(fleets: tuple[Path, Path]) -> None:
    old, _ = fleets

    result = run("diff", "--exit-code", str(old), str(old))

    assert result.exit_code == 0
    assert result.stdout == "no changes\n"


def test_the_coloured_text_report_prints_no_escaped_style(
    fleets: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A level below disruptive is styled bold=False (ESC [22m): kept as a style, so click strips it in a pipe,
    # not escaped into the text as a literal "\\x1b[22m".
    monkeypatch.delenv("NO_COLOR", raising=False)
    result = CliRunner().invoke(main, ["diff", *map(str, fleets)], color=False)
    assert "[restart]" in result.stdout or "[none]" in result.stdout
    assert "\\x1b" not in result.stdout and "\x1b" not in result.stdout


def test_exit_code_is_1_when_something_differs_and_only_with_the_flag(fleets: tuple[Path, Path]) -> None:
    old, new = fleets

    assert run("diff", "--exit-code", str(old), str(new)).exit_code == 1
    plain = run("diff", str(old), str(new))
    assert plain.exit_code == 0
    assert "t4: nvidia.com/gpu 12 -> 15" in plain.stdout
    assert "\x1b[" not in plain.stdout  # not a terminal: no colour


@pytest.mark.parametrize("output_format", ["text", "markdown", "json", "github"])
def test_every_format(fleets: tuple[Path, Path], output_format: str) -> None:
    old, new = fleets

    result = run("diff", "--format", output_format, str(old), str(new))

    assert result.exit_code == 0, result.output
    if output_format == "json":
        assert json.loads(result.stdout)["clusters"][0]["capacity"][0]["new"] == 15
    elif output_format == "markdown":
        assert result.stdout.startswith("<!-- gpustack-gen diff -->")
    elif output_format == "github":
        assert result.stdout.startswith(f"::warning file={new},title=prod%3A device-plugin-config::")
    else:
        assert (
            "[restart] device-plugin config changes for t4 (time-slicing, 4 per GPU -> time-slicing, 5 per GPU)"
            in result.stdout
        )


def test_invalid_input_exits_2(tmp_path: Path, fleets: tuple[Path, Path]) -> None:
    old, _ = fleets
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: gpustack-gen/v1alpha1\nkind: Fleet\nclusters: []\n")

    invalid = run("diff", str(old), str(bad))
    assert invalid.exit_code == 2
    assert "bad.yaml" in invalid.stderr

    missing = run("diff", str(old), str(tmp_path / "nope.yaml"))
    assert missing.exit_code == 2
    assert "no such file or folder" in missing.stderr

    assert run("diff", str(old)).exit_code == 2  # NEW is required without --base
    assert run("diff", "--format", "xml", str(old), str(old)).exit_code == 2


def _two_clusters(data: dict[str, Any]) -> dict[str, Any]:
    second = copy.deepcopy(data["clusters"][0])
    second["name"] = "staging"
    data["clusters"].append(second)
    return data


@pytest.mark.parametrize("command", ["diff", "plan"])
def test_an_error_on_either_side_is_reported_though_the_sides_share_clusters(tmp_path: Path, command: str) -> None:
    unknown_gpu = _two_clusters(base())
    unknown_gpu["clusters"][1]["nodePools"][0]["gpu"] = "tesla-t5"  # staging: the same on both sides
    changed_too = copy.deepcopy(unknown_gpu)
    changed_too["clusters"][0]["nodePools"][0]["nodes"] = 4  # prod changed
    old = write_fleet(tmp_path / "old.yaml", unknown_gpu)
    new = write_fleet(tmp_path / "new.yaml", changed_too)

    unchanged = run(command, str(old), str(new))  # the old side's error, in the cluster both sides have

    assert unchanged.exit_code == 2, unchanged.output
    assert "old.yaml:" in unchanged.stderr and "clusters[1].nodePools[0].gpu" in unchanged.stderr

    broken = _two_clusters(base())
    broken["clusters"][0]["nodePools"][0]["gpu"] = "tesla-t5"  # prod: changed, and wrong only on the new side
    new = write_fleet(tmp_path / "new.yaml", broken)
    old = write_fleet(tmp_path / "old.yaml", _two_clusters(base()))

    in_changed = run(command, str(old), str(new))

    assert in_changed.exit_code == 2, in_changed.output
    assert "new.yaml:" in in_changed.stderr and "clusters[0].nodePools[0].gpu" in in_changed.stderr


def test_rendered_folders_and_fleets_mix(tmp_path: Path, fleets: tuple[Path, Path]) -> None:
    old, new = fleets
    assert run("render", str(old), "--out", str(tmp_path / "out")).exit_code == 0

    result = run("diff", "--format", "json", str(tmp_path / "out"), str(new))

    data = json.loads(result.stdout)
    assert data["impactAvailable"] is False
    assert data["clusters"][0]["findings"] is None
    assert {f["path"] for f in data["clusters"][0]["files"]} == {"capacity.yaml", "device-plugin-config.yaml"}


@pytest.mark.parametrize("folder_side", [0, 1])
def test_a_rendered_folder_beside_a_fleet_shares_nothing(
    tmp_path: Path, fleets: tuple[Path, Path], folder_side: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gpustack_gen.model
    from gpustack_gen.change import sides as inputs

    old, new = fleets
    assert run("render", str(old), "--out", str(tmp_path / "out")).exit_code == 0
    args = [str(tmp_path / "out"), str(new)] if folder_side == 0 else [str(new), str(tmp_path / "out")]
    shares: list[ClusterShare | None] = []

    def load(path: str | Path, share: ClusterShare | None = None) -> Fleet:
        shares.append(share)
        return load_fleet(Path(path), share=share)

    monkeypatch.setattr(gpustack_gen.model, "load_fleet", load)  # how OLD is read
    sides = inputs.read_sides(tuple(args), None, load)

    # A share would keep the fleet's reading and models for a second fleet load that never comes.
    assert shares == [None]
    assert sides[folder_side].files is not None and sides[1 - folder_side].fleet is not None


# --- --base ---------------------------------------------------------------------------------------


def git(cwd: Path, *args: str) -> str:
    assert GIT is not None
    identity = ["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"]
    done = subprocess.run(
        [GIT, *identity, *args], cwd=cwd, capture_output=True, text=True, check=True, env={"PATH": "/usr/bin:/bin"}
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fresh repository: commit 1 has the base fleet, commit 2 five replicas on t4."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write_fleet(root / "gitops" / "fleet.yaml", base())
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base fleet")
    write_fleet(root / "gitops" / "fleet.yaml", changed(five))
    git(root, "commit", "-q", "-am", "more replicas")
    return root


@needs_git
def test_base_compares_the_committed_fleet_with_the_working_file(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo / "gitops")  # the path is resolved against the repository top, not the cwd

    against_previous = run("diff", "--base", "HEAD~1", "--format", "json", "--exit-code", "fleet.yaml")
    against_head = run("diff", "--base", "HEAD", "--exit-code", "fleet.yaml")

    assert against_previous.exit_code == 1, against_previous.output
    data = json.loads(against_previous.stdout)
    assert data["old"] == "HEAD~1:gitops/fleet.yaml"
    assert data["new"] == "fleet.yaml"
    assert data["clusters"][0]["capacity"][0] == {
        "pool": "t4",
        "resource": "nvidia.com/gpu",
        "old": 12,
        "new": 15,
        "requestedOld": 6,
        "requestedNew": 6,
    }
    assert (against_head.exit_code, against_head.stdout) == (0, "no changes\n")


@needs_git
def test_base_sees_uncommitted_edits(repo: Path) -> None:
    fleet = repo / "gitops" / "fleet.yaml"
    write_fleet(fleet, changed(lambda d: pool(d, "t4")["sharing"].update(replicas=6)))

    result = run("diff", "--base", "HEAD", str(fleet))

    assert "t4: nvidia.com/gpu 15 -> 18" in result.stdout


@needs_git
def test_base_works_in_a_shallow_clone_once_the_ref_is_fetched(tmp_path: Path, repo: Path) -> None:
    git(repo, "branch", "-q", "base", "HEAD~1")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth=1", "--branch", "main", "--single-branch", repo.as_uri(), str(clone))
    fleet = str(clone / "gitops" / "fleet.yaml")

    before = run("diff", "--base", "origin/base", fleet)
    git(clone, "fetch", "-q", "--depth=1", "origin", "+refs/heads/base:refs/remotes/origin/base")
    after = run("diff", "--base", "origin/base", "--exit-code", fleet)

    assert before.exit_code == 2
    assert "unknown git ref 'origin/base'" in before.stderr
    assert "fetch it first" in before.stderr
    assert after.exit_code == 1, after.output
    assert "t4: nvidia.com/gpu 12 -> 15" in after.stdout


@needs_git
def test_base_errors_are_clear_and_exit_2(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fleet = repo / "gitops" / "fleet.yaml"
    added = write_fleet(repo / "gitops" / "new-fleet.yaml", base())
    outside = write_fleet(tmp_path / "elsewhere" / "fleet.yaml", base())

    unknown = run("diff", "--base", "no-such-ref", str(fleet))
    not_in_ref = run("diff", "--base", "HEAD", str(added))
    no_repo = run("diff", "--base", "HEAD", str(outside))
    option_like = run("diff", "--base=--output=x", str(fleet))
    two_args = run("diff", "--base", "HEAD", str(fleet), str(fleet))

    assert (unknown.exit_code, not_in_ref.exit_code, no_repo.exit_code, option_like.exit_code) == (2, 2, 2, 2)
    assert "unknown git ref 'no-such-ref'" in unknown.stderr
    assert "gitops/new-fleet.yaml is not in HEAD" in not_in_ref.stderr
    assert "not inside a git repository" in no_repo.stderr
    assert "is not a git ref" in option_like.stderr
    assert two_args.exit_code == 2

    monkeypatch.setenv("PATH", str(tmp_path / "empty-path"))
    no_git = run("diff", "--base", "HEAD", str(fleet))
    assert no_git.exit_code == 2
    assert "git is not installed" in no_git.stderr


@needs_git
def test_base_reports_an_invalid_committed_fleet(repo: Path) -> None:
    fleet = repo / "gitops" / "fleet.yaml"
    good = fleet.read_text()
    fleet.write_text("apiVersion: gpustack-gen/v1alpha1\nkind: Fleet\nclusters: []\n")
    git(repo, "commit", "-q", "-am", "broken")
    fleet.write_text(good)

    result = run("diff", "--base", "HEAD", str(fleet))

    assert result.exit_code == 2
    assert "HEAD:gitops/fleet.yaml" in result.stderr


@needs_git
def test_base_with_the_same_bytes_is_read_once_and_named_as_the_base(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpustack_gen.change import sides as inputs

    monkeypatch.chdir(repo / "gitops")
    loaded: list[str] = []
    parsed: list[str] = []
    parse = inputs._fleet_of_bytes

    def load(path: str, share: ClusterShare | None = None) -> Fleet:
        loaded.append(path)
        return load_fleet(Path(path), share=share)

    def counted(raw: bytes, label: str, share: ClusterShare | None = None) -> inputs.Side:
        parsed.append(label)
        return parse(raw, label, share)

    monkeypatch.setattr(inputs, "_fleet_of_bytes", counted)
    old, new = inputs.read_sides(("fleet.yaml",), "HEAD", load)

    assert (loaded, parsed) == (["fleet.yaml"], [])
    assert old.label == old.fleet.source == "HEAD:gitops/fleet.yaml"  # type: ignore[union-attr]
    assert old.fleet.clusters == new.fleet.clusters  # type: ignore[union-attr]
    expected = inputs.fleet_at_ref("HEAD", "fleet.yaml").fleet  # what reading the base on its own gives
    assert old.fleet == expected
    assert (new.label, new.path) == ("fleet.yaml", "fleet.yaml")

    parsed.clear()
    inputs.read_sides(("fleet.yaml",), "HEAD~1", load)  # different bytes: the base is read on its own
    assert parsed == ["HEAD~1:gitops/fleet.yaml"]


@needs_git
def test_base_with_the_same_invalid_bytes_reports_the_base(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo / "gitops")
    Path("fleet.yaml").write_text("apiVersion: gpustack-gen/v1alpha1\nkind: Fleet\nclusters: 3\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "broken")

    result = run("diff", "--base", "HEAD", "fleet.yaml")

    assert result.exit_code == 2, result.output
    assert "HEAD:gitops/fleet.yaml:3" in result.output
