"""A change rule with one wrong signature, deliberately: mypy must refuse it as a row of the change rules.

``outcomes`` returns a list of step names instead of the rule's outcomes.
"""

from __future__ import annotations

from gpustack_gen.change.context import ClusterChange
from gpustack_gen.change.model import Level

ID = "broken"
LEVEL = Level.NONE


def outcomes(change: ClusterChange) -> list[str]:
    return [type(change).__name__]
