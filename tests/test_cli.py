"""The command-line contract: output, exit codes 0/1/2/3, and never a traceback for the user's mistakes."""

from __future__ import annotations

import errno
import fcntl
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpustack_gen import __version__
from gpustack_gen.catalog import GPUS, get_gpu
from gpustack_gen.cli import main
from gpustack_gen.errors import InternalError
from gpustack_gen.validate.backends.hami import VALUES_KEYS as HAMI_VALUES_KEYS
from gpustack_gen.versions.dra import DRA_VERSIONS, GATE_TIME_SLICING
from gpustack_gen.versions.gpu_operator import OPERATOR_VERSIONS
from gpustack_gen.versions.hami import HAMI_VERSIONS

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "fleet.yaml"


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env)


def no_traceback(result: Result) -> None:
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def rendered_files(out: Path) -> set[str]:
    return {p.relative_to(out).as_posix() for p in out.rglob("*.yaml")}


@pytest.fixture(scope="module")
def example_files(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    out = tmp_path_factory.mktemp("ref") / "out"
    assert run("render", str(EXAMPLE), "--out", str(out)).exit_code == 0
    return rendered_files(out)


# --- validate ------------------------------------------------------------------------------------------


def test_validate_a_good_fleet() -> None:
    result = run("validate", str(EXAMPLE))
    assert result.exit_code == 0
    assert result.stdout == f"{EXAMPLE}: ok (3 clusters, 5 pools)\n"
    assert "warning:" in result.stderr  # time-slicing gives no memory isolation


def test_validate_a_bad_fleet_lists_located_problems_and_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "fleet.yaml"
    bad.write_text(EXAMPLE.read_text().replace("nodes: 3", "nodes: -3").replace("gpusPerNode: 8", "gpusPerNode: 0"))
    result = run("validate", str(bad))
    assert result.exit_code == 2
    problems = [line for line in result.stderr.splitlines() if "warning" not in line]
    assert len(problems) > 2
    assert problems[-1] == f"{len(problems) - 1} errors; nothing was written."
    assert all(line.startswith("fleet.yaml:") for line in problems[:-1])
    assert any(line.startswith("fleet.yaml:26:16: clusters[0].nodePools[0].nodes: ") for line in problems)
    assert any("clusters[2].nodePools[0].gpusPerNode" in line for line in problems)
    no_traceback(result)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"- a\n- b\n",
        b"just a string\n",
        b"apiVersion: [\n",
        b"\xff\xfe not utf-8\n",
        b"apiVersion: gpustack-gen/v1alpha1\nkind: Fleet\nclusters: 7\n",
        b"apiVersion: gpustack-gen/v1alpha1\napiVersion: gpustack-gen/v1alpha1\n",
        b"a: 1\n---\nb: 2\n",
    ],
)
@pytest.mark.parametrize("command", ["validate", "render"])
def test_bad_input_never_gives_a_traceback(tmp_path: Path, content: bytes, command: str) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_bytes(content)
    out = tmp_path / "out"
    args = [command, str(fleet)] + (["--out", str(out)] if command == "render" else [])
    result = run(*args)
    assert result.exit_code == 2, result.output
    no_traceback(result)
    assert "fleet.yaml" in result.stderr
    assert not out.exists()


@pytest.mark.parametrize("path", ["missing.yaml", "."])
def test_a_missing_or_unreadable_fleet_file_exits_2(tmp_path: Path, path: str) -> None:
    result = run("validate", str(tmp_path / path))
    assert result.exit_code == 2
    no_traceback(result)


def test_usage_errors_exit_2() -> None:
    assert run("render", str(EXAMPLE)).exit_code == 2  # --out is required
    assert run("no-such-command").exit_code == 2


# --- render --------------------------------------------------------------------------------------------


def test_render_writes_and_prints_a_summary(tmp_path: Path, example_files: set[str]) -> None:
    out = tmp_path / "out"
    result = run("render", str(EXAMPLE), "--out", str(out))
    assert result.exit_code == 0
    assert result.stdout == f"{out}: {len(example_files)} written, 0 unchanged, 0 removed\n"
    assert rendered_files(out) == example_files
    again = run("render", str(EXAMPLE), "--out", str(out))
    assert again.stdout == f"{out}: 0 written, {len(example_files)} unchanged, 0 removed\n"


def test_render_check_exits_0_when_up_to_date_and_1_listing_the_differences(
    tmp_path: Path, example_files: set[str]
) -> None:
    out = tmp_path / "out"
    missing = run("render", str(EXAMPLE), "--out", str(out), "--check")
    assert missing.exit_code == 1
    assert not out.exists()  # --check writes nothing
    assert missing.stdout.count("missing: ") == len(example_files)

    assert run("render", str(EXAMPLE), "--out", str(out)).exit_code == 0
    clean = run("render", str(EXAMPLE), "--out", str(out), "--check")
    assert clean.exit_code == 0
    assert clean.stdout == f"{out}: up to date ({len(example_files)} files)\n"

    (out / "prod" / "capacity.yaml").write_text((out / "prod" / "capacity.yaml").read_text() + "# edited\n")
    (out / "stage" / "capacity.yaml").unlink()
    (out / "prod" / "old.yaml").write_text("# Code generated by gpustack-gen. DO NOT EDIT.\nold: 1\n")
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    result = run("render", str(EXAMPLE), "--out", str(out), "--check")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"missing: {out / 'stage' / 'capacity.yaml'}",
        f"changed: {out / 'prod' / 'capacity.yaml'}",
        f"stale: {out / 'prod' / 'old.yaml'}",
    ]
    assert f"run gpustack-gen render {EXAMPLE} --out {out}" in result.stderr
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_render_one_cluster(tmp_path: Path, example_files: set[str]) -> None:
    out = tmp_path / "out"
    result = run("render", str(EXAMPLE), "--out", str(out), "--cluster", "prod")
    assert result.exit_code == 0
    assert rendered_files(out) == {f for f in example_files if f.startswith("prod/")}
    assert run("render", str(EXAMPLE), "--out", str(out), "--cluster", "prod", "--check").exit_code == 0


def test_render_an_unknown_cluster_exits_2(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run("render", str(EXAMPLE), "--out", str(out), "--cluster", "prd")
    assert result.exit_code == 2
    assert "no cluster named 'prd'" in result.stderr
    assert "clusters: prod, stage, train" in result.stderr
    assert not out.exists()
    no_traceback(result)


def test_render_into_a_file_exits_2(tmp_path: Path) -> None:
    target = tmp_path / "out"
    target.write_text("not a folder\n")
    result = run("render", str(EXAMPLE), "--out", str(target))
    assert result.exit_code == 2
    assert "is a file" in result.stderr
    assert target.read_text() == "not a folder\n"
    no_traceback(result)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_a_full_or_read_only_target_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    import tempfile

    def refuse(*args: object, **kwargs: object) -> str:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    result = run("render", str(EXAMPLE), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if "warning:" not in line]
    assert len(errors) == 1
    assert errors[0].startswith("error: cannot write beside ")
    assert os.strerror(code) in errors[0]
    no_traceback(result)


def test_a_render_that_finds_the_folder_locked_says_so(tmp_path: Path) -> None:
    lock = tmp_path / ".out.gpustack-gen.lock"
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        result = run("render", str(EXAMPLE), "--out", str(tmp_path / "out"), env={"GPUSTACK_GEN_LOCK_WAIT": "0"})
    assert result.exit_code == 2
    assert "error: another gpustack-gen render is writing" in result.stderr
    assert not (tmp_path / "out").exists()
    no_traceback(result)


# --- internal errors -----------------------------------------------------------------------------------


def _explode(*args: object, **kwargs: object) -> None:
    raise RuntimeError("boom\nsecond line")


def test_an_unexpected_exception_is_one_line_with_the_version_and_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("gpustack_gen.rendering.compile_cluster", _explode)
    result = run("render", str(EXAMPLE), "--out", str(tmp_path / "out"))
    assert result.exit_code == 3
    errors = [line for line in result.stderr.splitlines() if "warning:" not in line]
    assert errors == [
        f"internal error: RuntimeError: boom second line (gpustack-gen {__version__}). "
        "This is a bug: please report this, with the output of --debug."
    ]
    no_traceback(result)
    assert not (tmp_path / "out").exists()


def test_debug_shows_the_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("gpustack_gen.rendering.compile_cluster", _explode)
    result = run("--debug", "render", str(EXAMPLE), "--out", str(tmp_path / "out"))
    assert result.exit_code == 3
    assert "Traceback (most recent call last)" in result.stderr
    assert "RuntimeError: boom" in result.stderr
    assert "please report this" in result.stderr


def test_an_unexpected_exception_in_any_command_exits_3(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("gpustack_gen.model.intent.fleet_json_schema", _explode)
    result = run("schema")
    assert result.exit_code == 3
    assert "please report this" in result.stderr
    no_traceback(result)


def test_an_artifact_failing_its_schema_is_an_internal_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def reject(*args: object, **kwargs: object) -> None:
        raise InternalError("prod/gpu-operator-values.yaml", "devicePlugin.config", "is not of type 'object'")

    monkeypatch.setattr("gpustack_gen.rendering.validate_artifacts", reject)
    result = run("render", str(EXAMPLE), "--out", str(tmp_path / "out"))
    assert result.exit_code == 3
    last = result.stderr.splitlines()[-1]
    assert last.startswith("internal error: generated prod/gpu-operator-values.yaml: devicePlugin.config: ")
    assert f"gpustack-gen {__version__}" in last and "please report this" in last
    assert not (tmp_path / "out").exists()
    no_traceback(result)


# --- schema, versions, gpus ----------------------------------------------------------------------------


def test_schema_prints_the_committed_json_schema() -> None:
    result = run("schema")
    assert result.exit_code == 0
    printed = json.loads(result.stdout)
    assert printed["type"] == "object"
    assert {"apiVersion", "kind", "clusters"} <= set(printed["properties"])
    committed = REPO / "schemas" / "fleet.schema.json"
    assert printed == json.loads(committed.read_text(encoding="utf-8"))


def _version_tables() -> list[list[list[str]]]:
    """``gpustack-gen versions``: its tables (separated by a blank line), each a list of rows of words."""
    result = run("versions")
    assert result.exit_code == 0
    return [[line.split() for line in table.splitlines()] for table in result.stdout.split("\n\n")]


def test_versions_lists_every_known_operator_version() -> None:
    operator, _, _ = _version_tables()
    # "cdi-on-by-default", not "cdi-default": the column is the chart's default for cdi.enabled, and reads
    # easily as the cdi.default option.
    assert operator[0] == ["operator", "device-plugin", "mig-manager", "cdi-on-by-default", "mps", "verified"]
    assert [row[0] for row in operator[1:]] == [v.version for v in OPERATOR_VERSIONS]
    by_version = {row[0]: row[3] for row in operator[1:]}
    assert (by_version["v25.3.3"], by_version["v25.10.1"]) == ("no", "yes")


def test_versions_lists_the_hami_and_dra_driver_charts_and_what_they_gate() -> None:
    _, hami, dra = _version_tables()
    assert hami[0] == ["hami", "values-keys", "verified"]
    assert hami[1:] == [
        [v.version, str(sum(gate.allows(v) for gate in HAMI_VALUES_KEYS)), "yes" if v.verified else "no"]
        for v in HAMI_VERSIONS
    ]
    assert dra[0] == ["dra-driver", "chart", "source", "sharing", "kubernetes", "verified"]
    assert [row[0] for row in dra[1:]] == [v.version for v in DRA_VERSIONS]  # release order, not numeric
    rows = {row[0]: row for row in dra[1:]}
    assert rows["25.12.0"][1:3] == ["nvidia-dra-driver-gpu", "https://helm.ngc.nvidia.com/nvidia"]
    assert rows["0.4.1"][1:] == [
        "dra-driver-nvidia-gpu",
        "oci://registry.k8s.io/dra-driver-nvidia/charts",
        "time-slicing,mps",  # TimeSlicingSettings and MPSSupport, the gates a shared pool's DeviceClass needs
        "1.34.2",
        "yes",
    ]
    for release in DRA_VERSIONS:
        assert {"time-slicing", "mps"} >= set(rows[release.version][3].split(","))
        assert ("time-slicing" in rows[release.version][3]) == (GATE_TIME_SLICING in release.gates)


def test_gpus_lists_the_catalog() -> None:
    result = run("gpus")
    assert result.exit_code == 0
    assert [line.split()[0] for line in result.stdout.splitlines()] == [g.id for g in GPUS]


def test_gpus_shows_one_mig_gpu() -> None:
    result = run("gpus", "a100-40gb")
    assert result.exit_code == 0
    gpu = get_gpu("a100-40gb")
    assert gpu is not None
    assert result.stdout.startswith(f"a100-40gb: {gpu.name}")
    for profile in gpu.profiles:
        assert f"  {profile.name} " in result.stdout
    assert "built-in configs: " in result.stdout and "all-balanced" in result.stdout


def test_gpus_accepts_a_product_label_and_shows_a_gpu_without_mig() -> None:
    result = run("gpus", "Tesla-T4")
    assert result.exit_code == 0
    assert result.stdout.startswith("tesla-t4: ")
    assert "MIG: not supported" in result.stdout


def test_gpus_with_an_unknown_gpu_exits_2_with_a_suggestion() -> None:
    result = run("gpus", "a100-40g")
    assert result.exit_code == 2
    assert "unknown GPU 'a100-40g'; did you mean" in result.stderr
    no_traceback(result)


def test_version_option() -> None:
    result = run("--version")
    assert result.exit_code == 0
    assert __version__ in result.stdout
