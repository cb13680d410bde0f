"""``gpustack-gen blockers``: what it finds in a listing, and each way its input can be wrong (exit 2)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fleets import base, fleet

from gpustack_gen import shell
from gpustack_gen.change import commands
from gpustack_gen.change.blockers import bare_gpu_pods, blocking_budgets
from gpustack_gen.cli import main


def _node(name: str, pool: str) -> dict[str, Any]:
    return {"kind": "Node", "metadata": {"name": name, "labels": {"pool": pool}}}


def _pod(name: str, node: str | None, *, owner: str | None = "ReplicaSet", gpu: bool = True) -> dict[str, Any]:
    owners = [{"kind": owner, "name": "x", "controller": True}] if owner else []
    limits = {"nvidia.com/gpu": 1} if gpu else {"cpu": "1"}
    return {
        "kind": "Pod",
        "metadata": {"namespace": "ml", "name": name, "labels": {"app": "api"}, "ownerReferences": owners},
        "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"limits": limits}}]},
        "status": {"phase": "Running" if node else "Pending"},
    }


def _budget(allowed: int, selector: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "kind": "PodDisruptionBudget",
        "metadata": {"namespace": "ml", "name": "api"},
        "spec": {"selector": {"matchLabels": {"app": "api"}} if selector is None else selector},
        "status": {"disruptionsAllowed": allowed},
    }


def _listing(*items: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "List", "items": [_node("a-0", "a"), _node("a-1", "a"), _node("b-0", "b"), *items]}


TWO_PODS = (_pod("api-0", "a-0"), _pod("api-1", "a-1"))


@pytest.mark.parametrize(
    ("allowed", "whole_pool", "blocked"), [(0, False, True), (1, False, False), (1, True, True), (2, True, False)]
)
def test_a_budget_blocks_by_how_the_pool_is_drained(allowed: int, whole_pool: bool, blocked: bool) -> None:
    found = blocking_budgets(_listing(*TWO_PODS, _budget(allowed)), {"pool": "a"}, whole_pool=whole_pool)
    assert found == ([f"ml/api allows {allowed} of its 2 pods there"] if blocked else [])


def test_a_budget_over_pods_elsewhere_or_unselected_does_not_block() -> None:
    elsewhere = _listing(_pod("api-0", "b-0"), _budget(0))
    assert blocking_budgets(elsewhere, {"pool": "a"}, whole_pool=True) == []
    other = _budget(0, {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]})
    assert blocking_budgets(_listing(*TWO_PODS, other), {"pool": "a"}, whole_pool=True) == []


def test_bare_gpu_pods_on_the_nodes_or_pending_are_found() -> None:
    listing = _listing(
        _pod("notebook", "a-0", owner=None),
        _pod("waiting", None, owner=None),
        _pod("shell", "a-1", owner=None, gpu=False),
        _pod("elsewhere", "b-0", owner=None),
        *TWO_PODS,
    )
    assert bare_gpu_pods(listing, {"pool": "a"}) == ["ml/notebook", "ml/waiting"]


def _run(args: list[str], stdin: str) -> Any:
    return CliRunner().invoke(main, ["blockers", *args], input=stdin)


def test_the_command_exits_1_naming_each_blocker_and_0_when_none() -> None:
    listing = json.dumps(_listing(*TWO_PODS, _budget(1), _pod("notebook", "a-0", owner=None)))
    result = _run(["--selector", "pool=a", "--budgets", "whole-pool", "--bare-pods"], listing)
    assert result.exit_code == 1
    assert "PodDisruptionBudget ml/api allows 1 of its 3 pods there" in result.output  # the notebook matches it too
    assert "pod ml/notebook has no controller" in result.output
    assert _run(["--selector", "pool=b", "--budgets", "batch"], listing).exit_code == 0


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["--selector", "pool=a"], "{}", "nothing to check"),
        (["--selector", "pool", "--bare-pods"], "{}", "not a key=value"),
        (["--selector", "pool=a", "--bare-pods"], "{", "Expecting property name"),
        (["--selector", "pool=a", "--bare-pods"], "[]", "not a kubectl listing"),
        # The printed pipe's guard: kubectl failed before printing anything, or after part of the listing.
        (["--selector", "pool=a", "--bare-pods"], "listing failed\n", "nothing was checked"),
        (["--selector", "pool=a", "--bare-pods"], '{"items": []}\nlisting failed\n', "nothing was checked"),
        # Nested past the parser's recursion limit, and a count that is no integer: bad input, not our bug.
        (["--selector", "pool=a", "--bare-pods"], "[" * 100_000 + "]" * 100_000, "nested too deep"),
        (
            ["--selector", "pool=a", "--budgets", "batch"],
            json.dumps(_listing(*TWO_PODS, {**_budget(0), "status": {"disruptionsAllowed": float("inf")}})),
            "status.disruptionsAllowed",
        ),
    ],
)
def test_bad_input_exits_2(args: list[str], stdin: str, message: str) -> None:
    result = _run(args, stdin)
    assert result.exit_code == 2
    assert message in result.output


def test_names_from_the_cluster_are_printed_inert() -> None:
    pod = _pod("evil\x1b]52;c;x\x07", "a-0", owner=None)
    result = _run(["--selector", "pool=a", "--bare-pods"], json.dumps(_listing(pod)))
    assert result.exit_code == 1
    assert "\x1b" not in result.output and "\\x1b" in result.output


WRONG_TYPES = [
    {"kind": "Pod", "metadata": {"namespace": "ml", "name": "p", "ownerReferences": "x"}, "spec": ["a-0"]},
    {"kind": "Pod", "metadata": ["m"], "spec": {"nodeName": "a-0", "containers": "c"}, "status": 3},
    {"kind": "Pod", "metadata": {"name": "q"}, "spec": {"nodeName": "a-0", "containers": [{"resources": []}]}},
    {"kind": "PodDisruptionBudget", "metadata": {"namespace": "ml"}, "spec": {"selector": {"matchExpressions": [1]}}},
    {"kind": "PodDisruptionBudget", "metadata": {"namespace": "ml"}, "spec": [], "status": []},
    {"kind": "Pod", "metadata": {"name": "r"}, "spec": {"nodeName": ["a-0"]}},
    {"kind": "Node", "metadata": {"name": ["a-2"], "labels": {"pool": "a"}}},
]


@pytest.mark.parametrize("item", WRONG_TYPES, ids=range(len(WRONG_TYPES)))
def test_fields_of_the_wrong_type_hold_nothing_and_never_crash(item: dict[str, Any]) -> None:
    """A listing kubectl would never print, field by field: read as empty there (exit 0 or 1), never a traceback."""
    result = _run(
        ["--selector", "pool=a", "--budgets", "whole-pool", "--bare-pods"], json.dumps(_listing(*TWO_PODS, item))
    )
    assert result.exit_code in (0, 1), result.output
    assert "Traceback" not in result.output


def _pasted(tmp_path: Path, kubectl_status: int) -> subprocess.CompletedProcess[str]:
    """The pre-flight as printed, run by bash without pipefail, with a kubectl that lists the nodes and pods and
    then exits ``kubectl_status`` (as it does when RBAC forbids listing PodDisruptionBudgets)."""
    listing = json.dumps(_listing(*TWO_PODS))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    kubectl = bin_dir / "kubectl"
    kubectl.write_text(f"#!/bin/bash\nprintf '%s\\n' {shlex.quote(listing)}\nexit {kubectl_status}\n", encoding="utf-8")
    kubectl.chmod(0o755)
    gpustack_gen = bin_dir / "gpustack-gen"
    gpustack_gen.write_text(f'#!/bin/bash\nexec {shlex.quote(sys.executable)} -m gpustack_gen "$@"\n', encoding="utf-8")
    gpustack_gen.chmod(0o755)
    pool = fleet(base()).clusters[0].pools[0]
    text = shell.text_in("prod", commands.budgets_allow_drain(pool, whole_pool=False))
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    return subprocess.run(["bash", "-c", text], env=env, capture_output=True, text=True, check=False, timeout=60)


def test_a_listing_cut_short_by_a_failing_kubectl_fails_the_printed_check(tmp_path: Path) -> None:
    failed = _pasted(tmp_path, kubectl_status=1)
    assert failed.returncode == 2, failed.stderr
    assert "the kubectl that listed the cluster failed" in failed.stderr


def test_the_same_listing_passes_when_kubectl_succeeds(tmp_path: Path) -> None:
    done = _pasted(tmp_path, kubectl_status=0)
    assert done.returncode == 0, done.stderr
