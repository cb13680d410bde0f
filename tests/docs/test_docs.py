"""The documentation site: generated pages are current, every command and backend has a page, and every shell
and Python example runs, printing what the page shows (``UPDATE_GOLDEN=1`` rewrites the pages from the real
output)."""

from __future__ import annotations

import difflib
import os
import shutil
import sys
from pathlib import Path

import click
import pytest
from golden import assert_golden

from docsgen.changes import change_pages
from docsgen.examples import RUN, SHELL_OR_PYTHON, blocks, run_page, scratch_env
from docsgen.fields import render_fields
from docsgen.lint_rules import render_lint_rules
from docsgen.verify_inputs import render_verify_inputs
from gpustack_gen.cli import main
from gpustack_gen.compile.backends import BACKENDS

ROOT = Path(__file__).resolve().parent.parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
RUNNABLE = [page for page in PAGES if any(block.language in RUN for block in blocks(page.read_text(encoding="utf-8")))]
SCRATCH_INPUTS = ("examples", "tests/verify/data")  # what a page's examples may read, at the same paths


def _name(page: Path) -> str:
    return page.relative_to(DOCS).as_posix()


def test_field_reference_is_current() -> None:
    assert_golden(render_fields(), DOCS / "reference" / "fields.md")


def test_lint_rules_page_is_current() -> None:
    assert_golden(render_lint_rules(), DOCS / "reference" / "lint-rules.md")


def test_verify_inputs_page_is_current() -> None:
    assert_golden(render_verify_inputs(ROOT), DOCS / "reference" / "verify-inputs.md")


def test_change_kind_pages_are_current() -> None:
    pages = change_pages(ROOT / "tests" / "changes")
    for name, text in pages.items():
        assert_golden(text, DOCS / "changes" / name)
    stale = {page.name for page in (DOCS / "changes").glob("*.md")} - set(pages)
    assert not stale, f"pages of rules that no longer exist: {sorted(stale)}"


def test_every_command_has_a_page_generated_from_the_click_app() -> None:
    assert isinstance(main, click.Group)
    for name, command in main.commands.items():
        page = (DOCS / "commands" / f"{name}.md").read_text(encoding="utf-8")
        assert page.startswith(f"# gpustack-gen {name}\n"), name
        assert f"    :command: {command.callback.__name__ if command.callback else name}\n" in page, name
        assert f"    :prog_name: gpustack-gen {name}\n" in page, name


def test_every_backend_has_a_page() -> None:
    for name in BACKENDS:
        assert (DOCS / "backends" / f"{name}.md").is_file(), name


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_shell_or_python_block_runs_or_says_why_not(page: Path) -> None:
    for block in blocks(page.read_text(encoding="utf-8")):
        if block.language in SHELL_OR_PYTHON and block.language not in RUN:
            assert block.marked, (
                f"{_name(page)}:{block.line}: a {block.language} block that does not run needs <!-- not run: why --> above it"
            )


@pytest.mark.parametrize("page", RUNNABLE, ids=_name)
def test_examples_print_what_the_page_shows(page: Path, tmp_path: Path) -> None:
    for inputs in SCRATCH_INPUTS:
        shutil.copytree(ROOT / inputs, tmp_path / inputs)
    shown = page.read_text(encoding="utf-8")
    actual = run_page(shown, tmp_path, scratch_env(Path(sys.executable).parent))
    if os.environ.get("UPDATE_GOLDEN") == "1":
        if actual != shown:
            page.write_text(actual, encoding="utf-8")
        return
    diff = "".join(difflib.unified_diff(shown.splitlines(True), actual.splitlines(True), str(page), "actual"))
    assert actual == shown, f"{_name(page)}: the examples print something else (UPDATE_GOLDEN=1 rewrites it):\n{diff}"
