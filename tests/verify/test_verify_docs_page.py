"""docs/verify.md says what verify does: the files and commands it reads, and its exit codes."""

from __future__ import annotations

import re
from pathlib import Path

from verify_helpers import ROOT, cluster

from gpustack_gen.errors import ExitCode
from gpustack_gen.shell import text_in
from gpustack_gen.verify import state_parts

PAGE = (ROOT / "docs" / "verify.md").read_text(encoding="utf-8")


def test_the_files_table_holds_every_file_of_a_gpu_operator_cluster_with_its_command() -> None:
    rows = re.findall(r"^\| `([a-z-]+\.json)` \| `(kubectl [^`]+)` \|", PAGE, re.M)
    shown = [text_in("CONTEXT", part.command_into(Path("."))) for part in state_parts(cluster("prod"))]
    assert [f"{command} > {file}" for file, command in rows] == shown


def test_the_exit_codes_table_is_the_exit_codes() -> None:
    codes = {int(code) for code in re.findall(r"^\| ([0-9]) \|", PAGE, re.M)}
    assert codes == {int(code) for code in ExitCode}
