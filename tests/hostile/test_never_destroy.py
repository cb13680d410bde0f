"""``init`` and ``import`` never destroy: everything is checked before anything is written, ``--force`` overwrites
only the file it documents, and a write that fails part-way leaves nothing behind."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

import pytest
from hostile_helpers import ROOT, run_cli

from gpustack_gen.emit import single_file
from gpustack_gen.emit.single_file import write_new_file
from gpustack_gen.errors import OutputError
from gpustack_gen.init import fleet_schema_text, init_fleet_text, write_starter

MINE = "# my own fleet\n"


def test_init_refusing_an_existing_fleet_writes_no_schema(tmp_path: Path) -> None:
    (tmp_path / "fleet.yaml").write_text(MINE)
    result = run_cli("init", "--out", "fleet.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert "fleet.yaml already exists; pass --force to overwrite it" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fleet.yaml"]
    assert (tmp_path / "fleet.yaml").read_text() == MINE


def test_init_force_never_overwrites_the_users_schema(tmp_path: Path) -> None:
    (tmp_path / "fleet.yaml").write_text(MINE)
    (tmp_path / "fleet.schema.json").write_text("{}\n")
    result = run_cli("init", "--out", "fleet.yaml", "--force", cwd=tmp_path)
    assert result.returncode == 2
    assert "fleet.schema.json already exists and is not this version's fleet schema" in result.stderr
    assert (tmp_path / "fleet.schema.json").read_text() == "{}\n"
    assert (tmp_path / "fleet.yaml").read_text() == MINE  # checked first, so nothing was written


def test_init_force_overwrites_the_fleet_and_keeps_an_identical_schema(tmp_path: Path) -> None:
    (tmp_path / "fleet.yaml").write_text(MINE)
    (tmp_path / "fleet.schema.json").write_text(fleet_schema_text())
    result = run_cli("init", "--out", "fleet.yaml", "--force", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "fleet.yaml").read_text() != MINE
    assert "fleet.schema.json: written" not in result.stdout


def test_a_fleet_that_cannot_be_written_takes_its_new_schema_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk while writing the fleet: no schema, no truncated fleet, and the retry works."""
    real_fsync, calls = single_file.os.fsync, []

    def fsync(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 2:  # the schema's went through; the fleet's does not
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(single_file.os, "fsync", fsync)
    out = tmp_path / "fleet.yaml"
    text = init_fleet_text(schema="fleet.schema.json", out_name="fleet.yaml")
    with pytest.raises(OutputError, match=r"cannot write .*fleet\.yaml: No space left on device"):
        write_starter(out, text, force=False, schema_beside=True)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(single_file.os, "fsync", real_fsync)
    assert write_starter(out, text, force=False, schema_beside=True) == (tmp_path / "fleet.schema.json", out)


def test_a_write_that_fails_part_way_leaves_no_file(tmp_path: Path) -> None:
    """Before: the file was opened in place and written, so a failure left a truncated file the retry refused."""
    path = tmp_path / "fleet.yaml"
    with pytest.raises(UnicodeEncodeError):
        write_new_file(path, "x: y\n" * 100_000 + "\udc80")  # the encoder fails after the first megabytes
    assert list(tmp_path.iterdir()) == []
    write_new_file(path, "x: y\n")
    assert path.read_text() == "x: y\n"
    with pytest.raises(OutputError, match="already exists"):
        write_new_file(path, "other\n")
    assert path.read_text() == "x: y\n"


def test_import_out_refuses_an_existing_file_without_force(tmp_path: Path) -> None:
    shutil.copy(ROOT / "tests" / "importer" / "data" / "nodes.yaml", tmp_path / "nodes.yaml")
    (tmp_path / "fleet.yaml").write_text(MINE)
    args = (
        "import",
        "--cluster",
        "prod",
        "--nodes",
        "nodes.yaml",
        "--kubernetes",
        "1.29.15",
        "--operator-version",
        "v25.3.3",
    )
    args = (*args, "--out", "fleet.yaml")
    refused = run_cli(*args, cwd=tmp_path)
    assert refused.returncode == 2
    assert "fleet.yaml already exists; pass --force to overwrite it" in refused.stderr
    assert (tmp_path / "fleet.yaml").read_text() == MINE
    forced = run_cli(*args, "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert "kind: Fleet" in (tmp_path / "fleet.yaml").read_text()
