"""Every command a rendered file's header gives names its cluster: a header read in a shell whose current context
is another cluster must not send the reader there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RENDERED = sorted(path for path in (ROOT / "examples").glob("**/rendered/**/*.yaml") if path.is_file())
# A command, not prose about one: a program, its verb and, within the clause, a flag.
KUBECTL = re.compile(r"\bkubectl (?!--context )[a-z-]+[^;()]*? -{1,2}[a-z]")
HELM_TO_CLUSTER = re.compile(
    r"\bhelm (upgrade|uninstall|get|install|rollback) (?![^;()]*--kube-context )(?:[^;()]*? )?-{1,2}[a-z]"
)


@pytest.mark.parametrize("path", RENDERED, ids=lambda p: str(p.relative_to(ROOT)))
def test_header_commands_name_their_context(path: Path) -> None:
    header = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    assert [line for line in header if KUBECTL.search(line) or HELM_TO_CLUSTER.search(line)] == []


def test_the_check_sees_a_command_without_its_context() -> None:
    assert KUBECTL.search("# kubectl apply -k . first")
    assert not KUBECTL.search("# kubectl --context prod apply -k . first")
    assert not KUBECTL.search("# never kubectl label a node by hand")
    assert HELM_TO_CLUSTER.search("# helm upgrade --install x y")
    assert not HELM_TO_CLUSTER.search("# helm upgrade --install x y --kube-context prod")
    assert not HELM_TO_CLUSTER.search("# helm upgrade alone never updates the chart's CRDs.")
