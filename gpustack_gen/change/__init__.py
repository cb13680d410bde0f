"""What a fleet change does to a running cluster: one set of rules behind both ``diff`` and ``plan``.

Each rule (:mod:`.rules`) turns one cluster's old and new intent into findings for review and the
steps that carry them out; :func:`analyse` runs them all and orders the steps into a runbook. The data
types load without the rules and compilers (``analyse`` and ``ClusterAnalysis`` are imported on use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .capacity import CapacityChange
from .model import Action, Finding, Level, Outcome, Phase, Step

if TYPE_CHECKING:
    from ..workdir import Paths
    from .analysis import ClusterAnalysis, analyse

__all__ = [
    "Action",
    "CapacityChange",
    "ClusterAnalysis",
    "Finding",
    "Level",
    "Outcome",
    "Paths",
    "Phase",
    "Step",
    "analyse",
]
_LAZY = {"ClusterAnalysis": ".analysis", "analyse": ".analysis", "Paths": ".commands"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value
