"""One golden-file check for every test: rewrite under UPDATE_GOLDEN=1, else fail with a unified diff."""

from __future__ import annotations

import difflib
import os
from pathlib import Path


def assert_golden(actual: str, path: Path) -> None:
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text(encoding="utf-8") != actual:
            path.write_text(actual, encoding="utf-8")
        return
    if not path.is_file():
        raise AssertionError(f"{path} is missing: run the test with UPDATE_GOLDEN=1, then review it")
    expected = path.read_text(encoding="utf-8")
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True), actual.splitlines(keepends=True), str(path), "actual"
            )
        )
        raise AssertionError(f"{path} differs (check it, then UPDATE_GOLDEN=1 rewrites it):\n{diff}")


def assert_shown(shown: str, actual: str, page: Path) -> None:
    """What ``page`` shows (``shown``, quoted verbatim from it) is ``actual``; ``UPDATE_GOLDEN=1`` rewrites it there."""
    if os.environ.get("UPDATE_GOLDEN") == "1":
        text = page.read_text(encoding="utf-8")
        assert shown in text, f"{page} does not hold the text the test read from it"
        if shown != actual:
            page.write_text(text.replace(shown, actual, 1), encoding="utf-8")
        return
    if actual != shown:
        diff = "".join(difflib.unified_diff(shown.splitlines(True), actual.splitlines(True), str(page), "actual"))
        raise AssertionError(f"{page} shows something else (check it, then UPDATE_GOLDEN=1 rewrites it):\n{diff}")
