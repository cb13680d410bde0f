"""Readers with budgets: special files, alias bombs, floods of errors, loose JSON and empty state files.

Each input a pull request or someone else's cluster can supply is tried through the command that reads it; each
is refused with exit 2 and a message that names the file, never read without end, never exit 3.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from hostile_helpers import ROOT, run_cli

from gpustack_gen.errors import MAX_PROBLEMS
from gpustack_gen.model.backends.dra.gpu_config import quantity_bytes
from gpustack_gen.yamlio.input_file import InputFileError, read_input_bytes

HEALTHY = ROOT / "tests" / "verify" / "data" / "prod-healthy"
IMPORT_DATA = ROOT / "tests" / "importer" / "data"
BIG_INTEGER = "1" * 5000  # CPython's int() refuses more than 4300 digits

# Nine lines: 9**9 references once expanded.
ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]\n" for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
)

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


def _special(kind: str, path: Path) -> Path:
    """A FIFO nobody writes to, or a symlink to /dev/zero, at ``path``: the two inputs that never end."""
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    return path


SPECIAL = pytest.mark.parametrize("kind", [pytest.param("fifo", marks=needs_fifo), "dev-zero"])


@SPECIAL
def test_the_reader_refuses_what_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    with pytest.raises(InputFileError, match="not a regular file"):
        read_input_bytes(_special(kind, tmp_path / "input"), 1024)
    with pytest.raises(InputFileError, match="not a regular file but a folder"):
        read_input_bytes(tmp_path, 1024)


def test_the_size_cap_counts_the_bytes_read(tmp_path: Path) -> None:
    path = tmp_path / "input"
    path.write_bytes(b"x" * 1025)
    with pytest.raises(InputFileError, match="larger than 1,024 bytes") as refused:
        read_input_bytes(path, 1024)
    assert refused.value.too_large
    path.write_bytes(b"x" * 1024)
    assert read_input_bytes(path, 1024) == b"x" * 1024


@SPECIAL
def test_validate_refuses_a_fleet_that_never_ends(tmp_path: Path, kind: str) -> None:
    fleet = _special(kind, tmp_path / "fleet.yaml")
    result = run_cli("validate", fleet.name, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("fleet.yaml: not a regular file but ")


@SPECIAL
def test_lint_refuses_a_file_that_never_ends(tmp_path: Path, kind: str) -> None:
    result = run_cli("lint", _special(kind, tmp_path / "config.yaml").name, cwd=tmp_path)
    assert result.returncode == 2, result.stdout
    assert "config.yaml: not a regular file but " in result.stdout


@SPECIAL
@pytest.mark.parametrize("option", ["--values", "--configmap", "--clusterpolicy", "--nodes"])
def test_import_refuses_an_input_that_never_ends(tmp_path: Path, kind: str, option: str) -> None:
    shutil.copy(IMPORT_DATA / "nodes.yaml", tmp_path / "nodes.yaml")
    nodes = [] if option == "--nodes" else ["--nodes", "nodes.yaml"]
    _special(kind, tmp_path / "input.yaml")
    result = run_cli("import", "--cluster", "prod", option, "input.yaml", *nodes, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "input.yaml: not a regular file but " in result.stderr


def _state(tmp_path: Path, nodes: str | None = None) -> Path:
    state = tmp_path / "state"
    shutil.copytree(HEALTHY, state)
    if nodes is not None:
        (state / "nodes.json").write_text(nodes, encoding="utf-8")
    return state


def _verify(state: Path) -> tuple[int, str]:
    result = run_cli("verify", "examples/fleet.yaml", "--cluster", "prod", "--from", state)
    return result.returncode, result.stderr


@SPECIAL
def test_verify_refuses_a_state_file_that_never_ends(tmp_path: Path, kind: str) -> None:
    state = _state(tmp_path)
    (state / "nodes.json").unlink()
    _special(kind, state / "nodes.json")
    code, stderr = _verify(state)
    assert code == 2
    assert "nodes.json: not a regular file but " in stderr


def test_verify_refuses_an_alias_bomb(tmp_path: Path) -> None:
    code, stderr = _verify(_state(tmp_path, ALIAS_BOMB))
    assert code == 2
    assert "nodes.json: invalid YAML: more than 4,000,000 values once its aliases are expanded" in stderr


def test_import_refuses_an_alias_bomb(tmp_path: Path) -> None:
    (tmp_path / "nodes.yaml").write_text(ALIAS_BOMB, encoding="utf-8")
    result = run_cli("import", "--cluster", "prod", "--nodes", "nodes.yaml", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "once its aliases are expanded" in result.stderr


def test_lint_refuses_an_alias_bomb(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(ALIAS_BOMB, encoding="utf-8")
    result = run_cli("lint", "config.yaml", cwd=tmp_path)
    assert result.returncode == 2, result.stdout
    assert "once its aliases are expanded" in result.stdout


def test_a_flood_of_bad_items_prints_a_bounded_report(tmp_path: Path) -> None:
    code, stderr = _verify(_state(tmp_path, json.dumps({"kind": "List", "items": [{}] * 20_000})))
    assert code == 2
    lines = stderr.splitlines()
    assert len(lines) <= MAX_PROBLEMS + 4, len(lines)  # fleet warnings, the capped problems, the rest counted
    assert any(f"... and {20_000 - MAX_PROBLEMS:,} more problems: items not read" in line for line in lines)


def test_lint_prints_a_bounded_report(tmp_path: Path) -> None:
    (tmp_path / "configs.yaml").write_text("version: v2\n---\n" * 5_000, encoding="utf-8")
    result = run_cli("lint", "configs.yaml", cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    lines = result.stdout.splitlines()
    assert len(lines) == MAX_PROBLEMS + 2
    assert lines[-2] == f"... and {5_000 - MAX_PROBLEMS:,} more problems"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the file is empty, null or only comments: not a kubectl list"),
        ("  \n\n   \n", "the file is empty, null or only comments: not a kubectl list"),
        ("null\n", "the file is empty, null or only comments: not a kubectl list"),
        ("# kubectl: error: You must be logged in to the server\n", "the file is empty, null or only comments"),
        ('{"kind": "List", "items": [], "x": NaN}', "invalid JSON: NaN is not a JSON number"),
        ('{"kind": "List", "items": [], "x": -Infinity}', "invalid JSON: -Infinity is not a JSON number"),
        ('{"kind": "List", "items": [], "items": []}', "invalid JSON: the key 'items' appears twice in one object"),
        (f'{{"kind": "List", "items": [], "x": {BIG_INTEGER}}}', "invalid JSON: an integer of more than 4,300 digits"),
        (f"kind: List\nitems: []\nx: {BIG_INTEGER}\n", "invalid YAML: an integer of more than 4,300 digits"),
    ],
    ids=["empty", "whitespace", "null", "comment", "nan", "infinity", "duplicate", "json-int", "yaml-int"],
)
def test_verify_refuses_a_state_file_that_is_not_a_kubectl_list(tmp_path: Path, text: str, message: str) -> None:
    code, stderr = _verify(_state(tmp_path, text))
    assert code == 2, stderr
    assert f"nodes.json: {message}" in stderr


def test_validate_refuses_an_integer_of_more_than_4300_digits(tmp_path: Path) -> None:
    text = (
        (ROOT / "examples" / "fleet.yaml").read_text(encoding="utf-8").replace("nodes: 3\n", f"nodes: {BIG_INTEGER}\n")
    )
    (tmp_path / "fleet.yaml").write_text(text, encoding="utf-8")
    result = run_cli("validate", "fleet.yaml", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "fleet.yaml: invalid YAML: an integer of more than 4,300 digits" in result.stderr


def test_lint_refuses_an_integer_of_more_than_4300_digits(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(f"version: v1\nflags: {{migStrategy: none}}\nx: {BIG_INTEGER}\n")
    result = run_cli("lint", "config.yaml", cwd=tmp_path)
    assert result.returncode == 2, result.stdout
    assert "an integer of more than 4,300 digits" in result.stdout


@pytest.mark.parametrize("quantity", ["1E", "1Ei", "1e5000", "9" * 70])
def test_validate_words_a_huge_gpu_memory_as_a_located_error(tmp_path: Path, quantity: str) -> None:
    text = (ROOT / "examples" / "hami" / "fleet.yaml").read_text(encoding="utf-8")
    assert "gpuMemory: 3Gi" in text
    (tmp_path / "fleet.yaml").write_text(text.replace("gpuMemory: 3Gi", f'gpuMemory: "{quantity}"', 1))
    result = run_cli("validate", "fleet.yaml", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "fleet.yaml:29:" in result.stderr and "gpuMemory" in result.stderr


def test_exa_quantities_are_exa_and_exbi() -> None:
    """``E`` is the exa suffix and ``Ei`` exbi, not an exponent without digits (k8s.io/apimachinery quantity.go)."""
    assert quantity_bytes("1E") == Decimal(10) ** 18
    assert quantity_bytes("1Ei") == Decimal(2) ** 60
    assert quantity_bytes("1e3") == 1000
    assert quantity_bytes("1e999999999") is None
    assert quantity_bytes(int(BIG_INTEGER[:4000])) is None


def test_git_dubious_ownership_is_reported_as_such(tmp_path: Path) -> None:
    """git refuses a repository another user owns (CI containers): say so, and how to trust it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_git = bin_dir / "git"
    fake_git.write_text(
        f"#!{sys.executable}\nimport sys\n"
        "sys.stderr.write(\"fatal: detected dubious ownership in repository at '/repo'\\n"
        'To add an exception for this directory, call:\\n\\n\\tgit config --global --add safe.directory /repo\\n")\n'
        "sys.exit(128)\n"
    )
    fake_git.chmod(fake_git.stat().st_mode | stat.S_IEXEC)
    shutil.copy(ROOT / "examples" / "fleet.yaml", tmp_path / "fleet.yaml")
    result = run_cli(
        "diff", "--base", "HEAD", "fleet.yaml", cwd=tmp_path, env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    )
    assert result.returncode == 2, result.stderr
    assert '"dubious ownership"' in result.stderr
    assert "git config --global --add safe.directory /repo" in result.stderr
    assert "not inside a git repository" not in result.stderr


DEEP = "x: " + "[" * 5000 + "]" * 5000 + "\n"  # deeper than the parser's stack


def test_lint_refuses_nesting_deeper_than_the_limit(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(DEEP)
    result = run_cli("lint", "config.yaml", cwd=tmp_path)
    assert result.returncode == 2, result.stdout
    assert "config.yaml: not valid YAML: nesting deeper than 64 levels" in result.stdout


def test_lint_refuses_an_embedded_config_nested_deeper_than_the_limit(tmp_path: Path) -> None:
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "gpu-operator"}}
    configmap["data"] = {"config.yaml": "x: " + "[" * 900 + "]" * 900}  # within the stack, past any real config
    (tmp_path / "configmap.yaml").write_text(json.dumps(configmap))
    result = run_cli("lint", "configmap.yaml", cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    assert 'data["config.yaml"]: not valid YAML: nesting deeper than 64 levels' in result.stdout


def test_verify_refuses_a_state_file_nested_too_deeply(tmp_path: Path) -> None:
    code, stderr = _verify(_state(tmp_path, DEEP))
    assert code == 2
    assert "nodes.json: invalid YAML: nesting deeper than 64 levels" in stderr


def test_a_committed_fleet_over_the_size_limit_is_not_read_from_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpustack_gen.change import sides as inputs
    from gpustack_gen.change.sides import DiffInputError

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("x" * 1000)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    for args in (["init", "-q"], ["add", "fleet.yaml"], ["commit", "-qm", "fleet"]):
        subprocess.run(["git", *args], cwd=tmp_path, env=env, check=True, capture_output=True)
    monkeypatch.setattr(inputs, "MAX_FLEET_BYTES", 999)
    with pytest.raises(DiffInputError, match=r"fleet\.yaml at HEAD is 1,000 bytes; a fleet file is at most 999"):
        inputs.read_at_ref("HEAD", fleet)
