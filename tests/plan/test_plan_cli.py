"""``gpustack-gen plan``: sides, formats, exit codes, paths relative to where the commands run."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from fleets import base, changed, pool, prod
from ruamel.yaml import YAML

from gpustack_gen.cli import _DIFF_FORMATS, _PLAN_FORMATS, main
from gpustack_gen.diff.report import DIFF_REPORTS
from gpustack_gen.plan.report import PLAN_REPORTS

GIT = shutil.which("git")


def write_fleet(path: Path, data: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        YAML(typ="safe", pure=True).dump(data, handle)
    return path


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def five(data: dict[str, object]) -> None:
    pool(data, "t4")["sharing"].update(replicas=5)


def test_format_choices_are_the_report_tables() -> None:
    assert tuple(PLAN_REPORTS) == _PLAN_FORMATS
    assert tuple(DIFF_REPORTS) == _DIFF_FORMATS


def test_a_plan_exits_0_and_names_paths_from_where_it_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = write_fleet(tmp_path / "gitops" / "old.yaml", base())
    helm = {"release": "api", "chart": "./charts/api", "valuesFiles": ["values/api.yaml"]}
    new = write_fleet(
        tmp_path / "gitops" / "fleet.yaml",
        changed(
            lambda d: (
                five(d),
                pool(d, "t4")["sharing"].update(renameByDefault=True),
                prod(d)["workloads"][0].update(helm=helm),
            )
        ),
    )
    monkeypatch.chdir(tmp_path)

    result = run("plan", "--rendered", "out/", str(old.relative_to(tmp_path)), str(new.relative_to(tmp_path)))

    assert result.exit_code == 0, result.output
    assert "after gpustack-gen render gitops/fleet.yaml --out out/;" in result.stdout
    assert "$ kubectl --context prod apply -k out/prod\n" in result.stdout
    # The fleet's paths are relative to the fleet file; the commands', to where they run.
    assert (
        "$ helm upgrade --install api ./gitops/charts/api --namespace ml --values gitops/values/api.yaml "
        "--values out/prod/workloads/ml.api.yaml --kube-context prod\n" in result.stdout
    )


def test_a_change_that_cannot_be_rolled_out_exits_1_with_the_fix(tmp_path: Path) -> None:
    old = write_fleet(tmp_path / "old.yaml", base())
    new = write_fleet(
        tmp_path / "new.yaml",
        changed(
            lambda d: (
                pool(d, "a100")["sharing"].update(layout={"3g.20gb": 2}),
                prod(d)["workloads"][1].update(migProfile="3g.20gb"),
            )
        ),
    )

    result = run("plan", "--format", "json", str(old), str(new))

    assert result.exit_code == 1
    (cluster,) = json.loads(result.stdout)["clusters"]
    assert cluster["steps"] == []
    (error,) = cluster["errors"]
    assert error["rule"] == "retention"
    assert "retired: {migConfigs: [{gpu: a100-40gb" in error["hint"]


def test_nothing_to_roll_out(tmp_path: Path) -> None:
    old = write_fleet(tmp_path / "old.yaml", base())
    result = run("plan", str(old), str(old))
    assert (result.exit_code, result.stdout.splitlines()[-1]) == (0, "nothing to roll out")


def test_every_format(tmp_path: Path) -> None:
    old = write_fleet(tmp_path / "old.yaml", base())
    new = write_fleet(tmp_path / "new.yaml", changed(five))
    outputs = {fmt: run("plan", "--format", fmt, str(old), str(new)) for fmt in _PLAN_FORMATS}
    assert all(r.exit_code == 0 for r in outputs.values())
    assert json.loads(outputs["json"].stdout)["format"] == "gpustack-gen-plan/v1"
    assert "<pre><code>kubectl --context prod apply -k rendered/prod</code></pre>" in outputs["markdown"].stdout
    assert "restart-device-plugin" in outputs["text"].stdout


def test_bad_input_exits_2(tmp_path: Path) -> None:
    old = write_fleet(tmp_path / "old.yaml", base())
    new = write_fleet(tmp_path / "new.yaml", changed(five))
    assert run("render", str(old), "--out", str(tmp_path / "out")).exit_code == 0

    folder = run("plan", str(tmp_path / "out"), str(new))
    missing = run("plan", str(tmp_path / "nope.yaml"), str(new))
    one_side = run("plan", str(new))
    unknown_cluster = run("plan", "--cluster", "nope", str(old), str(new))

    assert folder.exit_code == 2 and "plan needs fleet files on both sides" in folder.stderr
    assert missing.exit_code == 2 and "no such file or folder" in missing.stderr
    assert one_side.exit_code == 2 and "give OLD and NEW" in one_side.stderr
    assert unknown_cluster.exit_code == 2 and "no cluster named nope" in unknown_cluster.stderr


def test_cluster_filter(tmp_path: Path) -> None:
    def two(data: dict[str, object]) -> None:
        data["clusters"].append({**copy.deepcopy(data["clusters"][0]), "name": "stage"})  # type: ignore[attr-defined]

    old = write_fleet(tmp_path / "old.yaml", changed(two))
    new = write_fleet(tmp_path / "new.yaml", changed(lambda d: (two(d), five(d))))
    only_stage = json.loads(run("plan", "--format", "json", "--cluster", "stage", str(old), str(new)).stdout)
    only_prod = json.loads(run("plan", "--format", "json", "--cluster", "prod", str(old), str(new)).stdout)
    assert [c["name"] for c in only_stage["clusters"]] == []  # stage did not change; prod is filtered out
    assert [c["name"] for c in only_prod["clusters"]] == ["prod"]


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_base_plans_from_the_committed_fleet(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    identity = ["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"]
    fleet = write_fleet(root / "fleet.yaml", base())
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run(["git", *identity, "add", "."], cwd=root, check=True)
    subprocess.run(["git", *identity, "commit", "-q", "-m", "base"], cwd=root, check=True)
    write_fleet(fleet, changed(five))

    result = run("plan", "--base", "HEAD", str(fleet))

    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("gpustack-gen plan: HEAD:fleet.yaml -> ")


def test_diff_points_to_plan(tmp_path: Path) -> None:
    old = write_fleet(tmp_path / "old.yaml", base())
    new = write_fleet(tmp_path / "new.yaml", changed(five))
    result = run("diff", str(old), str(new))
    assert (
        result.stdout.splitlines()[-1]
        == f"the steps in a safe order, with their commands: gpustack-gen plan {old} {new}"
    )
