"""The YAML machinery lives in ``gpustack_gen/yamlio`` alone, and knows nothing of what the documents mean."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import gpustack_gen

PACKAGE = Path(gpustack_gen.__file__).resolve().parent
YAMLIO = PACKAGE / "yamlio"
# What yamlio may use of the rest of the package: located problems and the GC pause of the fast reader.
YAMLIO_MAY_IMPORT = {"errors", "gcpause"}


def _imports(path: Path) -> list[tuple[int, str, int]]:
    """(level, module, line) of every import in ``path``: level 0 for absolute imports."""
    found: list[tuple[int, str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            found.append((node.level, node.module or "", node.lineno))
        elif isinstance(node, ast.Import):
            found.extend((0, alias.name, node.lineno) for alias in node.names)
    return found


def _modules(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def test_ruamel_is_configured_only_in_yamlio() -> None:
    """Every ruamel loader and dumper is built in yamlio, so that each reader's settings live in one place."""
    outside = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in _modules(PACKAGE)
        if YAMLIO not in path.parents
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if "YAML(" in line or "from ruamel.yaml import YAML" in line
    ]
    assert outside == []


def test_the_model_does_not_parse_yaml() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in _modules(PACKAGE / "model")
        for level, module, line in _imports(path)
        if module.startswith("ruamel") and level == 0
    ]
    assert offenders == []


def test_yamlio_imports_nothing_that_knows_the_fleet() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE)}:{line}: {'.' * level}{module}"
        for path in _modules(YAMLIO)
        for level, module, line in _imports(path)
        if level > 1 and module.split(".")[0] not in YAMLIO_MAY_IMPORT
    ]
    assert offenders == []


def test_importing_the_loaders_does_not_load_ruamel() -> None:
    """Commands import readers at start-up; ruamel is loaded on the first document read."""
    code = "import sys, gpustack_gen.yamlio.load, gpustack_gen.yamlio.writer; print('ruamel.yaml' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
