"""``verify FLEET --all`` over the bundled example: each cluster read through its own context of one kubeconfig,
each context a stand-in API server on 127.0.0.1; one summary table, each cluster's report, the worst exit code."""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path

import pytest
from apiserver import api_server, write_kubeconfig
from click.testing import CliRunner
from test_verify_in_progress import mig_pending
from test_verify_live import _loopback_only  # noqa: F401  (autouse: no proxy, no KUBECONFIG)
from verify_helpers import DATA, EXAMPLE, copy_state

from gpustack_gen.cli import main


def run_all(tmp_path: Path, folders: dict[str, Path], *extra: str) -> tuple[int, str, dict[str, list[str]]]:
    """``verify --all`` with a kubeconfig of one context per cluster, each served from its folder."""
    with ExitStack() as stack:
        servers = {name: stack.enter_context(api_server(folder)) for name, folder in folders.items()}
        kubeconfig = write_kubeconfig(tmp_path / "config", {name: url for name, (url, _) in servers.items()}, "prod")
        result = CliRunner().invoke(
            main, ["verify", str(EXAMPLE), "--all", "--kubeconfig", str(kubeconfig), *extra], catch_exceptions=False
        )
        requests = {name: [path for _, path in recorded.requests] for name, (_, recorded) in servers.items()}
    return result.exit_code, result.stdout, requests


def folders(tmp_path: Path) -> dict[str, Path]:
    return {
        "prod": DATA / "prod-healthy",
        "stage": DATA / "prod-seed",  # prod as found: stage's pool does not match it
        "train": copy_state("train-healthy", tmp_path / "train", mig_pending),
    }


def test_every_cluster_through_its_own_context_in_one_table(tmp_path: Path) -> None:
    code, out, requests = run_all(tmp_path, folders(tmp_path))
    assert code == 1  # the worst: stage differs
    lines = out.splitlines()
    assert lines[0] == f"gpustack-gen verify: every cluster of {EXAMPLE}"
    table = lines[2:6]
    assert table[0].split() == ["cluster", "context", "outcome", "errors", "warnings", "in", "progress"]
    assert [row.split()[:2] for row in table[1:]] == [["prod", "prod"], ["stage", "stage"], ["train", "train"]]
    assert "matches" in table[1] and "does not match" in table[2] and "rollout in progress" in table[3]
    for name in ("prod", "stage", "train"):
        assert f"== cluster {name} (context {name}) ==" in out
        assert any(path.startswith("/api/v1/nodes?") for path in requests[name])  # each read its own server
    assert out.rstrip().endswith("exit 1: does not match (stage)")


def test_json_holds_each_cluster_s_document(tmp_path: Path) -> None:
    code, out, _ = run_all(tmp_path, folders(tmp_path), "--format", "json")
    data = json.loads(out)
    assert (code, data["format"], data["exitCode"]) == (1, "gpustack-gen-verify-fleet/v1", 1)
    assert [(c["cluster"], c["context"], c["exitCode"]) for c in data["clusters"]] == [
        ("prod", "prod", 0),
        ("stage", "stage", 1),
        ("train", "train", 4),
    ]
    assert data["clusters"][0]["result"]["format"] == "gpustack-gen-verify/v1"


def test_a_cluster_without_its_context_is_reported_and_the_others_still_checked(tmp_path: Path) -> None:
    available = folders(tmp_path)
    del available["stage"]
    code, out, _ = run_all(tmp_path, available)
    assert code == 2
    assert "== cluster stage (context stage) ==\nerror: kubeconfig: " in out
    assert "== cluster train (context train) ==" in out


def test_the_worst_exit_code_orders_in_progress_below_a_difference(tmp_path: Path) -> None:
    """0 and 4 give 4; 4 and 1 give 1; an unreadable cluster (2) is worse than any difference."""
    from gpustack_gen import load_fleet
    from gpustack_gen.errors import GpustackError
    from gpustack_gen.verify import read_state_dir, verify_cluster
    from gpustack_gen.verify.fleet_run import verify_fleet

    fleet = load_fleet(EXAMPLE)
    train_pending = copy_state("train-healthy", tmp_path / "train", mig_pending)

    def codes(sources: dict[str, Path | None]) -> tuple[list[int], int]:
        def read(cluster: object, context: str) -> object:
            folder = sources[context]
            if folder is None:
                raise GpustackError("unreachable")
            return read_state_dir(folder, fleet.cluster(context))  # type: ignore[arg-type]

        clusters = tuple(c for c in fleet.clusters if c.name in sources)
        result = verify_fleet(
            clusters,
            lambda cluster: cluster.name,
            read,  # type: ignore[arg-type]
            lambda cluster, state: verify_cluster(cluster, state, fleet_label="fleet"),
            fleet_label="fleet",
        )
        return [int(o.exit_code) for o in result.outcomes], int(result.exit_code)

    assert codes({"prod": DATA / "prod-healthy", "train": train_pending}) == ([0, 4], 4)
    assert codes({"stage": DATA / "prod-seed", "train": train_pending}) == ([1, 4], 1)
    assert codes({"prod": DATA / "prod-healthy", "stage": None}) == ([0, 2], 2)


@pytest.mark.parametrize("extra", [["--cluster", "prod"], ["--context", "prod"], ["--from", "."]])
def test_all_takes_no_cluster_source(extra: list[str]) -> None:
    result = CliRunner().invoke(main, ["verify", str(EXAMPLE), "--all", *extra])
    assert result.exit_code == 2 and "--all reads every cluster through its own context" in result.stderr


def test_neither_cluster_nor_all_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["verify", str(EXAMPLE)])
    assert result.exit_code == 2 and "give --cluster NAME, or --all" in result.stderr


def test_each_cluster_is_read_through_its_kube_context(tmp_path: Path) -> None:
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(EXAMPLE.read_text(encoding="utf-8"))
    for cluster in data["clusters"]:
        cluster["kubeContext"] = f"{cluster['name']}-admin"
    fleet = tmp_path / "examples" / "fleet.yaml"
    fleet.parent.mkdir()
    with fleet.open("w", encoding="utf-8") as out:
        YAML(typ="safe").dump(data, out)
    with ExitStack() as stack:
        served = {
            f"{n}-admin": stack.enter_context(api_server(DATA / "prod-healthy"))[0] for n in ("prod", "stage", "train")
        }
        kubeconfig = write_kubeconfig(tmp_path / "config", served, "prod-admin")
        result = CliRunner().invoke(main, ["verify", str(fleet), "--all", "--kubeconfig", str(kubeconfig)])
    assert "== cluster train (context train-admin) ==" in result.stdout
    assert "kubectl --context train-admin " in result.stdout


def test_the_docs_show_the_table_this_scenario_prints(tmp_path: Path) -> None:
    from verify_helpers import ROOT

    _, out, _ = run_all(tmp_path, folders(tmp_path))
    page = (ROOT / "docs" / "verify.md").read_text(encoding="utf-8")
    table = out.splitlines()[2:6]
    assert "\n".join(table) in page
