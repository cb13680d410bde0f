"""gpustack-gen: compile a GPU fleet intent into validated NVIDIA GPU Operator artifacts.

    from pathlib import Path
    from gpustack_gen import load_fleet, render

    fleet = load_fleet(Path("fleet.yaml"))
    render(fleet).write("rendered/")

Names are imported on first use, so that ``gpustack-gen --help`` starts without loading the models.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Bundle": "emit",
    "Drift": "emit",
    "RenderedFile": "emit",
    "WriteSummary": "emit",
    "FleetError": "errors",
    "GpustackError": "errors",
    "InternalError": "errors",
    "OutputError": "errors",
    "Problem": "errors",
    "Severity": "errors",
    "Fleet": "model",
    "load_fleet": "model",
    "render": "rendering",
}

__all__ = [
    "Bundle",
    "Drift",
    "Fleet",
    "FleetError",
    "GpustackError",
    "InternalError",
    "OutputError",
    "Problem",
    "RenderedFile",
    "Severity",
    "WriteSummary",
    "__version__",
    "load_fleet",
    "render",
]

if TYPE_CHECKING:
    from .emit import Bundle, Drift, RenderedFile, WriteSummary
    from .errors import FleetError, GpustackError, InternalError, OutputError, Problem, Severity
    from .model import Fleet, load_fleet
    from .rendering import render


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'gpustack_gen' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
