"""docs/verify.md says what verify does: the files and commands it reads, and its exit codes."""

from __future__ import annotations

import re
from pathlib import Path

from verify_helpers import ROOT, cluster

from gpustack_gen import load_fleet
from gpustack_gen.errors import ExitCode
from gpustack_gen.shell import text_in
from gpustack_gen.verify import state_parts

PAGE = (ROOT / "docs" / "verify.md").read_text(encoding="utf-8")


OPERATOR_PART, STANDALONE_PART = PAGE.split("On backend `device-plugin`", 1)
ROWS = r"^\| `([a-z-]+\.json)` \| `(kubectl [^`]+)` \|"


def test_the_files_table_holds_every_file_of_a_gpu_operator_cluster_with_its_command() -> None:
    rows = re.findall(ROWS, OPERATOR_PART, re.M)
    shown = [text_in("CONTEXT", part.command_into(Path("."))) for part in state_parts(cluster("prod"))]
    assert [f"{command} > {file}" for file, command in rows] == shown


def test_the_standalone_plugin_table_holds_the_files_it_reads_besides_the_nodes() -> None:
    lab = load_fleet(ROOT / "examples" / "device-plugin" / "fleet.yaml").cluster("lab")
    assert lab is not None
    rows = re.findall(ROWS, STANDALONE_PART.split("\n## ", 1)[0], re.M)
    shown = [text_in("CONTEXT", part.command_into(Path("."))) for part in state_parts(lab) if part.name != "nodes"]
    assert sorted(f"{command} > {file}" for file, command in rows) == sorted(shown)


def test_the_exit_codes_table_is_the_exit_codes() -> None:
    codes = {int(code) for code in re.findall(r"^\| ([0-9]) \|", PAGE, re.M)}
    assert codes == {int(code) for code in ExitCode}
