"""Shared fixtures: where the read-only upstream reference data lives.

Conformance tests read ``../shared/upstream`` beside the checkout. Outside CI they skip when it is
absent; in CI (``CI`` set) a missing folder fails them, so they can never silently stop running.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# In CI every property test draws the same examples (a failure there is a bug, never bad luck); on a
# developer's machine they draw new ones each run, which is how new bugs are found.
settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("dev")
settings.load_profile("ci" if os.environ.get("CI") else "dev")

REPO_ROOT = Path(__file__).resolve().parent.parent
UPSTREAM_DIR = Path(os.environ.get("GPUSTACK_UPSTREAM_DIR", REPO_ROOT.parent / "shared" / "upstream"))


@pytest.fixture(scope="session")
def upstream() -> Path:
    """The upstream reference folder; fails in CI and skips elsewhere when it is missing."""
    if UPSTREAM_DIR.is_dir():
        return UPSTREAM_DIR
    if os.environ.get("CI"):
        pytest.fail(f"upstream reference data not found at {UPSTREAM_DIR} (required in CI)")
    pytest.skip(f"upstream reference data not found at {UPSTREAM_DIR}")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT
