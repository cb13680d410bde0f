"""The README's "Checking a running cluster": its kubectl commands are the ones verify reads, its output is real,
for the GPU Operator's prod, HAMi's stage and the DRA driver's train."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from dra_helpers import BROKEN as DRA_BROKEN
from dra_helpers import DRA_EXAMPLE, train
from dra_helpers import HEALTHY as DRA_HEALTHY
from hami_helpers import BROKEN, HAMI_EXAMPLE, HEALTHY, stage
from verify_helpers import DATA, EXAMPLE, ROOT, cluster, copy_state

from gpustack_gen.cli import main
from gpustack_gen.model.fleet import Cluster
from gpustack_gen.shell import text_in
from gpustack_gen.verify import state_parts

SECTION = (
    (ROOT / "README.md").read_text(encoding="utf-8").split("## Checking a running cluster\n", 1)[1].split("\n## ", 1)[0]
)
COMMANDS = [block.splitlines() for block in re.findall(r"```sh\n(.*?)```", SECTION, re.S)]
SHOWN = re.findall(r"```text\n\$ (gpustack-gen verify .*?)\n(.*?)```", SECTION, re.S)


def _commands(of: Cluster, name: str | None = None) -> list[str]:
    """The commands writing ``of``'s state files (``name``: only that part's), as run in the --from folder."""
    parts = [part for part in state_parts(of) if name in (None, part.name)]
    return [text_in(of.kube_context, part.command_into(Path("."))) for part in parts]


def test_the_commands_write_the_files_verify_reads() -> None:
    prod, hami, dra = COMMANDS
    assert prod[:-1] == _commands(cluster("prod"))
    assert prod[-1] == "gpustack-gen verify examples/fleet.yaml --cluster prod --from ."
    assert hami == _commands(stage(), "release")
    every = {command.replace("--context prod", "--context train") for command in _commands(cluster("prod"))}
    assert dra == [command for command in _commands(train()) if command not in every]


def _shown_output_is_real(shown: tuple[str, str], example: Path, tmp_path: Path) -> None:
    """The shown command, run in ``tmp_path`` (which holds the state folder) with the example at its path."""
    command, output = shown
    fleet = tmp_path / example.relative_to(ROOT)
    fleet.parent.mkdir(parents=True)
    shutil.copy(example, fleet)
    result = CliRunner().invoke(main, command.split()[1:], catch_exceptions=False)
    assert result.exit_code == 1
    assert result.stdout == output


def test_the_output_is_real(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    shutil.copytree(DATA / "prod-seed", tmp_path / "state")
    _shown_output_is_real(SHOWN[0], EXAMPLE, tmp_path)


def test_the_hami_output_is_real(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    copy_state(HEALTHY, tmp_path / "state", BROKEN)
    _shown_output_is_real(SHOWN[1], HAMI_EXAMPLE, tmp_path)


def test_the_dra_output_is_real(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    copy_state(DRA_HEALTHY, tmp_path / "state", DRA_BROKEN)
    _shown_output_is_real(SHOWN[2], DRA_EXAMPLE, tmp_path)
