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
