"""No backend imports another: in every layer's wing, a backend's modules import no other backend's modules.

Checked on the source (direct imports, absolute and relative): the registries in each wing's ``__init__`` import
every backend, and shared modules that import a registry are not backends.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "gpustack_gen"
WINGS = sorted(path.parent for path in PACKAGE.rglob("backends/__init__.py"))
SHARED_IN_WING = {"__init__", "charts", "nvidia_plugin", "operator_plugin"}  # helpers several backends of a wing use


def _backends(wing: Path) -> set[str]:
    names = {path.stem for path in wing.glob("*.py")} | {path.name for path in wing.iterdir() if path.is_dir()}
    return names - SHARED_IN_WING - {"__pycache__"}


def _imported(module: Path) -> set[str]:
    """Dotted names a module imports, relative ones resolved against its package."""
    package = module.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            stem = ".".join([*base, *(node.module.split(".") if node.module else [])])
            found.add(stem)
            found.update(f"{stem}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("wing", WINGS, ids=lambda wing: str(wing.relative_to(PACKAGE)))
def test_no_backend_of_the_wing_imports_another(wing: Path) -> None:
    prefix = ".".join(wing.relative_to(PACKAGE.parent).parts)
    backends = _backends(wing)
    assert len(backends) >= 2
    crossings = []
    for backend in sorted(backends):
        own = wing / backend
        modules = sorted(own.rglob("*.py")) if own.is_dir() else [own.with_suffix(".py")]
        for module in modules:
            for name in _imported(module):
                other = name.removeprefix(prefix + ".").split(".")[0] if name.startswith(prefix + ".") else None
                if other in backends and other != backend:
                    crossings.append(f"{module.relative_to(PACKAGE)} imports {name}")
    assert crossings == []
