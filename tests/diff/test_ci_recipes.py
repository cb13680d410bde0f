"""The pre-commit hooks and CI recipes, tested by running the commands they name."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fleets import base, changed, pool
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
GIT = shutil.which("git")

pytestmark = pytest.mark.skipif(
    not (BIN / "gpustack-gen").exists() or shutil.which("sh") is None,
    reason="needs the gpustack-gen script beside the interpreter and a POSIX shell",
)


def load(path: Path) -> Any:
    return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))


def env(**extra: str) -> dict[str, str]:
    return {"PATH": f"{BIN}{os.pathsep}/usr/bin{os.pathsep}/bin", "HOME": os.environ.get("HOME", "/tmp"), **extra}


def write_fleet(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        YAML(typ="safe", pure=True).dump(data, handle)


def hooks() -> dict[str, dict[str, Any]]:
    return {hook["id"]: hook for hook in load(ROOT / ".pre-commit-hooks.yaml")}


def run_hook(hook: dict[str, Any], cwd: Path, files: list[str]) -> subprocess.CompletedProcess[str]:
    """What pre-commit runs: the entry, the args, then the staged files that match (unless pass_filenames is off)."""
    argv = shlex.split(hook["entry"]) + list(hook.get("args", []))
    if hook.get("pass_filenames", True):
        argv += [f for f in files if re.search(hook.get("files", ""), f)]
    return subprocess.run(argv, cwd=cwd, env=env(), capture_output=True, text=True, check=False)


def test_hook_definitions() -> None:
    found = hooks()

    assert set(found) == {"gpustack-gen-validate", "gpustack-gen-render-check"}
    for hook in found.values():
        assert hook["language"] == "python"
        assert {"id", "name", "entry"} <= set(hook)


def test_validate_hook_checks_every_staged_fleet_file(tmp_path: Path) -> None:
    hook = hooks()["gpustack-gen-validate"]
    write_fleet(tmp_path / "fleet.yaml", base())
    write_fleet(tmp_path / "other" / "fleet.yaml", base())

    ok = run_hook(hook, tmp_path, ["fleet.yaml", "other/fleet.yaml", "README.md", "rendered/prod/capacity.yaml"])

    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.count(": ok") == 2  # both fleets, and only the fleets

    (tmp_path / "other" / "fleet.yaml").write_text("apiVersion: gpustack-gen/v1alpha1\nkind: Fleet\nclusters: []\n")
    failed = run_hook(hook, tmp_path, ["other/fleet.yaml", "fleet.yaml"])

    assert failed.returncode == 2
    assert "other/fleet.yaml" in failed.stderr
    assert "fleet.yaml: ok" in failed.stdout  # the loop goes on after a failure


def test_render_check_hook(tmp_path: Path) -> None:
    hook = hooks()["gpustack-gen-render-check"]
    write_fleet(tmp_path / "fleet.yaml", base())
    subprocess.run(
        [str(BIN / "gpustack-gen"), "render", "fleet.yaml", "--out", "rendered"], cwd=tmp_path, env=env(), check=True
    )

    up_to_date = run_hook(hook, tmp_path, ["fleet.yaml"])
    write_fleet(tmp_path / "fleet.yaml", changed(lambda d: pool(d, "t4")["sharing"].update(replicas=5)))
    stale = run_hook(hook, tmp_path, ["fleet.yaml"])

    assert up_to_date.returncode == 0, up_to_date.stderr
    assert "up to date" in up_to_date.stdout
    assert stale.returncode == 1
    assert "rendered/prod/device-plugin-config.yaml" in stale.stdout


# --- CI recipes -----------------------------------------------------------------------------------

NOT_RUN = ("apt-get", "pip install", "curl", "gh pr comment")  # installs and posting need the CI service


def github_script() -> str:
    workflow = load(ROOT / "examples" / "ci" / "github-actions.yml")
    steps = workflow["jobs"]["fleet"]["steps"]
    lines = []
    for step in steps:
        run = step.get("run", "")
        if run and not any(word in run for word in NOT_RUN):
            lines.append(run)
    assert all("${{" not in line for line in lines), "run scripts take expressions through env, not inline"
    return "\n".join(lines)


def gitlab_script() -> str:
    job = load(ROOT / "examples" / "ci" / "gitlab-ci.yml")["gpustack-gen"]
    return "\n".join(line for line in job["script"] if not any(word in line for word in NOT_RUN))


def git(cwd: Path, *args: str) -> None:
    assert GIT is not None
    identity = ["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run([GIT, *identity, *args], cwd=cwd, env=env(), capture_output=True, check=True)


@pytest.fixture
def pull_request(tmp_path: Path) -> Path:
    """A shallow clone of a pull-request branch whose base branch is ``main``: five replicas on t4."""
    return _pull_request(tmp_path, lambda d: pool(d, "t4")["sharing"].update(replicas=5))


def _pull_request(tmp_path: Path, change: Any) -> Path:
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    write_fleet(origin / "fleet.yaml", base())
    subprocess.run(
        [str(BIN / "gpustack-gen"), "render", "fleet.yaml", "--out", "rendered"], cwd=origin, env=env(), check=True
    )
    git(origin, "add", ".")
    git(origin, "commit", "-q", "-m", "fleet")
    git(origin, "checkout", "-q", "-b", "more-replicas")
    write_fleet(origin / "fleet.yaml", changed(change))
    subprocess.run(
        [str(BIN / "gpustack-gen"), "render", "fleet.yaml", "--out", "rendered"], cwd=origin, env=env(), check=True
    )
    git(origin, "commit", "-q", "-am", "more replicas")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth=1", "--branch", "more-replicas", origin.as_uri(), str(clone))
    return clone


@pytest.mark.skipif(GIT is None or shutil.which("bash") is None, reason="needs git and bash")
@pytest.mark.parametrize(
    ("script", "variables"),
    [
        (github_script, {"BASE_REF": "main", "GITHUB_OUTPUT": "github-output.txt", "PLAN_STATUS": "0"}),
        (gitlab_script, {"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main"}),
    ],
    ids=["github-actions", "gitlab-ci"],
)
def test_ci_recipe_runs_in_a_shallow_clone(pull_request: Path, script: Any, variables: dict[str, str]) -> None:
    commands = script()
    assert "gpustack-gen validate" in commands
    assert "render" in commands and "--check" in commands
    assert "diff --base" in commands
    assert "plan --base" in commands

    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", commands],
        cwd=pull_request,
        env=env(FLEET="fleet.yaml", OUT="rendered", **variables),
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    markdown = (pull_request / "gpustack-gen-diff.md").read_text(encoding="utf-8")
    assert markdown.startswith("<!-- gpustack-gen diff -->")
    assert "t4: nvidia.com/gpu 12 -&gt; 15" in markdown
    assert (pull_request / "gpustack-gen-diff.json").is_file()
    comment = (pull_request / "gpustack-gen-comment.md").read_text(encoding="utf-8")
    assert comment.startswith(markdown) and "<!-- gpustack-gen plan -->" in comment
    # The restart's precondition first (v25.3.3's config-manager can block on a node without its label).
    assert "<pre><code>test -z " in comment and "kubectl --context prod rollout restart -n gpu-operator" in comment


@pytest.mark.skipif(GIT is None or shutil.which("bash") is None, reason="needs git and bash")
@pytest.mark.parametrize(
    ("script", "variables"),
    [
        (github_script, {"BASE_REF": "main", "GITHUB_OUTPUT": "github-output.txt", "PLAN_STATUS": "1"}),
        (gitlab_script, {"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main"}),
    ],
    ids=["github-actions", "gitlab-ci"],
)
def test_ci_recipe_fails_a_change_that_cannot_be_rolled_out(
    tmp_path: Path, script: Any, variables: dict[str, str]
) -> None:
    """A MIG layout change without the old config retired: the comment says what to add, the job fails."""

    def mig(data: dict[str, Any]) -> None:
        pool(data, "a100")["sharing"].update(layout={"3g.20gb": 2})
        data["clusters"][0]["workloads"][1]["migProfile"] = "3g.20gb"

    clone = _pull_request(tmp_path, mig)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script()],
        cwd=clone,
        env=env(FLEET="fleet.yaml", OUT="rendered", **variables),
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode != 0
    comment = (clone / "gpustack-gen-comment.md").read_text(encoding="utf-8")
    assert "cannot be rolled out as written" in comment
    assert "retired: {migConfigs:" in comment
