"""The README's "Checking a running cluster": its kubectl commands are the ones verify reads, its output is real."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from verify_helpers import DATA, EXAMPLE, ROOT

from gpustack_gen.cli import main
from gpustack_gen.verify import PARTS

SECTION = (
    (ROOT / "README.md").read_text(encoding="utf-8").split("## Checking a running cluster\n", 1)[1].split("\n## ", 1)[0]
)


def test_the_commands_write_the_files_verify_reads() -> None:
    block = re.search(r"```sh\n(.*?)```", SECTION, re.S)
    assert block is not None
    commands = block.group(1).splitlines()
    assert commands[:-1] == [part.command.format(namespace="gpu-operator") for part in PARTS]
    assert commands[-1] == "gpustack-gen verify examples/fleet.yaml --cluster prod --from ."


def test_the_output_is_real(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shown = re.search(r"```text\n\$ (gpustack-gen verify .*?)\n(.*?)```", SECTION, re.S)
    assert shown is not None
    (tmp_path / "examples").mkdir()
    shutil.copy(EXAMPLE, tmp_path / "examples" / "fleet.yaml")
    shutil.copytree(DATA / "prod-seed", tmp_path / "state")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    result = CliRunner().invoke(main, shown.group(1).split()[1:], catch_exceptions=False)
    assert result.exit_code == 1
    assert result.stdout == shown.group(2)
