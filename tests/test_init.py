"""``gpustack-gen init``: the starter file validates as written, for every GPU, and never clobbers a file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpustack_gen import load_fleet, render
from gpustack_gen.catalog import GPUS
from gpustack_gen.cli import main
from gpustack_gen.init import InitError, init_fleet_text
from gpustack_gen.model.intent import fleet_json_schema
from gpustack_gen.validate.schema_files import schema_path
from gpustack_gen.versions.gpu_operator import NEWEST_OPERATOR, OPERATOR_VERSIONS


@pytest.mark.parametrize("gpu", [g.id for g in GPUS])
def test_starter_file_validates_for_every_gpu(gpu: str) -> None:
    text = init_fleet_text("prod", [gpu])
    fleet = load_fleet(text, name="fleet.yaml")
    (cluster,) = fleet.clusters
    (pool,) = cluster.pools
    assert pool.gpu.id == gpu
    if pool.gpu.mig_capable:
        assert (pool.sharing.strategy, pool.sharing.mig_config) == ("mig", "all-balanced")
        assert cluster.mig_strategy == "mixed"
        assert pool.mig_devices()
    else:
        assert (pool.sharing.strategy, pool.sharing.replicas) == ("time-slicing", 4)
        assert cluster.mig_strategy == "single"  # not written: no MIG pool
        assert "mig:\n" not in text
    assert render(fleet).files  # and it renders


def test_every_gpu_at_once() -> None:
    text = init_fleet_text("lab", [g.id for g in GPUS])
    (cluster,) = load_fleet(text).clusters
    assert [p.gpu.id for p in cluster.pools] == [g.id for g in GPUS]
    assert cluster.mig_strategy == "mixed"
    assert render(load_fleet(text)).files


def test_a_product_label_or_a_repeated_gpu_gives_one_pool_per_model() -> None:
    (cluster,) = load_fleet(init_fleet_text("c", ["NVIDIA-A100-SXM4-40GB", "a100-40gb", "tesla-t4"])).clusters
    assert [p.name for p in cluster.pools] == ["a100-40gb", "tesla-t4"]


def test_defaults_and_the_modeline() -> None:
    text = init_fleet_text()
    first = text.splitlines()[0]
    # Printed (--out -): the schema's $id is an address that may never resolve; the installed file does.
    installed = schema_path("fleet.schema.json")
    assert first == f"# yaml-language-server: $schema={installed.as_uri()}"
    assert json.loads(installed.read_text(encoding="utf-8")) == fleet_json_schema()
    (cluster,) = load_fleet(text).clusters
    assert cluster.name == "gpu-cluster"
    assert cluster.operator.release.version == NEWEST_OPERATOR.version
    assert [p.gpu.id for p in cluster.pools] == ["tesla-t4"]
    assert init_fleet_text(schema="fleet.schema.json").startswith("# yaml-language-server: $schema=fleet.schema.json\n")


def test_every_cluster_named_is_scaffolded() -> None:
    fleet = load_fleet(init_fleet_text(["msk-prod", "spb-stage"], ["tesla-t4", "a100-40gb"]))
    assert [c.name for c in fleet.clusters] == ["msk-prod", "spb-stage"]
    assert all([p.gpu.id for p in c.pools] == ["tesla-t4", "a100-40gb"] for c in fleet.clusters)
    assert render(fleet).files


def test_cli_scaffolds_every_cluster_and_refuses_one_named_twice() -> None:
    runner = CliRunner()
    printed = runner.invoke(main, ["init", "--cluster", "msk-prod", "--cluster", "spb-stage", "--out", "-"])
    assert printed.exit_code == 0, printed.output
    assert [c.name for c in load_fleet(printed.stdout).clusters] == ["msk-prod", "spb-stage"]
    twice = runner.invoke(main, ["init", "--cluster", "prod", "--cluster", "prod", "--out", "-"])
    assert twice.exit_code == 2
    assert "cluster 'prod' is named twice" in twice.stderr


@pytest.mark.parametrize("version", [v.version for v in OPERATOR_VERSIONS])
def test_every_operator_version(version: str) -> None:
    (cluster,) = load_fleet(init_fleet_text("c", ["tesla-t4", "h100-80gb"], version)).clusters
    assert cluster.operator.release.version == version


@pytest.mark.parametrize(
    ("args", "option", "message"),
    [
        (("Prod_1", ["tesla-t4"], None), "--cluster", "uppercase"),
        (('a"\nb', ["tesla-t4"], None), "--cluster", "not a valid name"),
        (("c", ["t5"], None), "--gpu", "unknown GPU 't5'"),
        (("c", ["tesla-t4"], "v99.1.0"), "--operator-version", "unknown GPU Operator version"),
    ],
)
def test_bad_options_are_refused_before_templating(
    args: tuple[str, list[str], str | None], option: str, message: str
) -> None:
    with pytest.raises(InitError, match=message) as caught:
        init_fleet_text(*args)
    assert caught.value.option == option


def test_comment_text_cannot_break_out_of_its_line() -> None:
    text = init_fleet_text(schema="x\nclusters: []", out_name="a\nb.yaml")
    assert "\nclusters: []" not in text
    assert load_fleet(text).clusters


def test_cli_writes_then_refuses_to_clobber(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "fleet.yaml"
    first = runner.invoke(main, ["init", "--cluster", "prod", "--gpu", "l4", "--gpu", "a30-24gb", "--out", str(out)])
    assert first.exit_code == 0, first.output
    written = out.read_text(encoding="utf-8")
    assert runner.invoke(main, ["validate", str(out)]).exit_code == 0

    again = runner.invoke(main, ["init", "--cluster", "other", "--out", str(out)])
    assert again.exit_code == 2
    assert "already exists" in again.output
    assert out.read_text(encoding="utf-8") == written

    forced = runner.invoke(main, ["init", "--cluster", "other", "--out", str(out), "--force"])
    assert forced.exit_code == 0, forced.output
    assert load_fleet(out).clusters[0].name == "other"


def test_cli_prints_with_dash_and_reports_bad_options(tmp_path: Path) -> None:
    runner = CliRunner()
    printed = runner.invoke(main, ["init", "--gpu", "h100-80gb", "--out", "-"])
    assert printed.exit_code == 0
    assert load_fleet(printed.output).clusters[0].pools[0].sharing.strategy == "mig"
    bad = runner.invoke(main, ["init", "--gpu", "h100", "--out", str(tmp_path / "f.yaml")])
    assert bad.exit_code == 2
    assert "--gpu" in bad.output
    assert not (tmp_path / "f.yaml").exists()


def test_init_writes_the_schema_beside_the_fleet_and_points_at_it(tmp_path: Path) -> None:
    out = tmp_path / "gitops" / "fleet.yaml"
    out.parent.mkdir()
    first = CliRunner().invoke(main, ["init", "--out", str(out)])
    again = CliRunner().invoke(main, ["init", "--out", str(tmp_path / "gitops" / "other.yaml")])

    assert first.exit_code == 0 and again.exit_code == 0, (first.output, again.output)
    # A relative modeline: it resolves offline wherever the repository is checked out.
    assert out.read_text(encoding="utf-8").splitlines()[0] == "# yaml-language-server: $schema=fleet.schema.json"
    schema = out.parent / "fleet.schema.json"
    assert json.loads(schema.read_text(encoding="utf-8")) == fleet_json_schema()
    assert "fleet.schema.json: written" not in again.output  # the same schema is left as it is
    schema.write_text("{}\n", encoding="utf-8")
    stale = CliRunner().invoke(main, ["init", "--out", str(tmp_path / "gitops" / "third.yaml")])
    assert stale.exit_code == 2 and "fleet.schema.json already exists" in stale.output
