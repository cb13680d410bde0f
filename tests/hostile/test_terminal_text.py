"""Text from any input reaches the terminal inert, in every output format: one sanitiser, ``gpustack_gen.inert``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from hostile_helpers import ROOT, TERMINAL_ATTACK, assert_inert, run_cli, state_with_node, verify_from
from hypothesis import given
from hypothesis import strategies as st

from gpustack_gen.emit.annotations import workflow_command
from gpustack_gen.emit.header import header
from gpustack_gen.emit.markdown import markdown_escape
from gpustack_gen.inert import inert_json, inert_line, inert_text

CHANGE = ROOT / "tests" / "changes" / "dra-sharing"  # its plan redeploys a workload with helm --install <chart>


def test_escapes_clipboard_writes_erases_and_bidi_overrides() -> None:
    assert inert_line(TERMINAL_ATTACK) == "\\x1b]52;c;aGk=\\x07\\x1b[2K\\x0d\\u202e\\x9b2J"
    assert inert_text("a\nb\tc\x1b[2K") == "a\nb\tc\\x1b[2K"


@given(st.text())
def test_any_text_comes_out_inert_and_escaping_twice_changes_nothing(text: str) -> None:
    once = inert_text(text)
    assert_inert(once)
    assert inert_text(once) == once
    assert inert_line(text).isprintable()


@given(
    st.recursive(
        st.text() | st.integers() | st.none(), lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner)
    )
)
def test_json_stays_the_same_json(value: object) -> None:
    text = inert_json(json.dumps(value, ensure_ascii=False, indent=2))
    assert_inert(text)
    assert json.loads(text) == value


def test_only_our_own_styles_survive_in_a_coloured_report() -> None:
    ours = click.style("error", fg="red", bold=True)
    text = inert_text(f"{ours} node {TERMINAL_ATTACK}\x1b[8m", keep_styles=True)
    assert text.startswith(ours)
    assert text.count("\x1b") == ours.count("\x1b")


@pytest.mark.parametrize("fg", [None, "red", "green", "yellow", "cyan"])
@pytest.mark.parametrize("intensity", [{}, {"bold": True}, {"bold": False}, {"dim": True}, {"dim": False}])
def test_every_style_our_reports_use_survives_whole(fg: str | None, intensity: dict[str, bool]) -> None:
    styled = click.style("[none]", fg=fg, **intensity)  # type: ignore[arg-type]
    assert inert_text(styled, keep_styles=True) == styled


def test_every_output_helper_uses_the_one_sanitiser() -> None:
    """The header comment, Markdown cells and GitHub annotations all escape the same way."""
    one_line = TERMINAL_ATTACK.replace("\r", "")  # the header and Markdown make line breaks spaces first
    assert inert_line(one_line) in header(one_line, "prod", ())
    cell = str(markdown_escape(one_line))
    assert_inert(cell)
    assert cell.startswith("\\x1b&#93;52;c;aGk=\\x07")
    assert_inert(workflow_command("error", TERMINAL_ATTACK, file=TERMINAL_ATTACK, title=TERMINAL_ATTACK))


def _hostile_change(tmp_path: Path) -> tuple[Path, Path]:
    sides = []
    for side in ("old", "new"):
        text = (CHANGE / f"{side}.yaml").read_text(encoding="utf-8")
        assert "chart: ./charts/api\n" in text
        escaped = TERMINAL_ATTACK.encode("unicode_escape").decode("ascii")
        (tmp_path / f"{side}.yaml").write_text(
            text.replace("chart: ./charts/api\n", f'chart: "./charts/api{escaped}"\n')
        )
        sides.append(tmp_path / f"{side}.yaml")
    return sides[0], sides[1]


@pytest.mark.parametrize("output_format", ["text", "markdown", "json"])
def test_plan_prints_a_hostile_helm_chart_inert(tmp_path: Path, output_format: str) -> None:
    old, new = _hostile_change(tmp_path)
    result = run_cli("plan", old, new, "--format", output_format)
    assert result.returncode == 0, result.stderr
    assert "52;c;aGk=" in result.stdout  # the chart is printed, escaped
    assert_inert(result.stdout)
    assert_inert(result.stderr)


@pytest.mark.parametrize("output_format", ["text", "markdown", "json", "github"])
def test_diff_prints_a_hostile_file_name_inert(tmp_path: Path, output_format: str) -> None:
    """A pull request names the files: ``diff`` prints their names in every format."""
    old, new = _hostile_change(tmp_path)
    renamed = new.rename(tmp_path / f"fleet{TERMINAL_ATTACK}.yaml")
    result = run_cli("diff", old, renamed, "--format", output_format)
    assert result.returncode == 0, result.stderr
    assert "52;c;aGk=" in result.stdout
    assert_inert(result.stdout)
    assert_inert(result.stderr)


@pytest.mark.parametrize("output_format", ["text", "markdown", "json", "github"])
def test_verify_prints_a_hostile_label_inert(tmp_path: Path, output_format: str) -> None:
    def label(node: dict[str, Any]) -> None:
        node["metadata"]["labels"]["nvidia.com/gpu.product"] = "Tesla-T4" + TERMINAL_ATTACK

    result = verify_from(state_with_node(tmp_path, label), "--format", output_format)
    assert result.returncode == 1, result.stderr
    assert "52;c;aGk=" in result.stdout
    assert_inert(result.stdout)
    if output_format == "json":
        assert json.loads(result.stdout)["findings"]


def test_an_error_about_a_hostile_node_name_is_inert(tmp_path: Path) -> None:
    def rename(node: dict[str, Any]) -> None:
        node["metadata"]["name"] = "gpu-t4-a" + TERMINAL_ATTACK

    result = verify_from(state_with_node(tmp_path, rename))
    assert result.returncode == 2
    assert_inert(result.stderr)


def test_markdown_under_a_locale_that_is_not_utf8_is_written_not_a_crash(tmp_path: Path) -> None:
    result = run_cli(
        "plan", CHANGE / "old.yaml", CHANGE / "new.yaml", "--format", "markdown", env={"PYTHONIOENCODING": "latin-1"}
    )
    assert result.returncode == 0, result.stderr
    assert "\\u2192" in result.stdout  # the arrow the encoding cannot hold, as its escape
