"""One verify scenario per backend: a cluster of an example fleet, its healthy state, and an edit that breaks it.

The backend contract (``test_backend_contract.py``) runs each: the healthy state must verify clean and the
broken one must report errors, so a backend cannot register without verify data that exercises it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import device_plugin_helpers
import dra_helpers
import hami_helpers
from verify_helpers import EXAMPLE, Files, set_advertised

from gpustack_gen.model.backends import device_plugin, dra, gpu_operator, hami


@dataclass(frozen=True)
class Scenario:
    example: Path
    cluster: str
    healthy: str  # a folder of tests/verify/data
    broken: Callable[[Files], None]


SCENARIOS: Mapping[str, Scenario] = {
    gpu_operator.NAME: Scenario(
        EXAMPLE, "train", "train-healthy", lambda files: set_advertised(files, "gpu-a100-1", "nvidia.com/mig-1g.5gb", 0)
    ),
    hami.NAME: Scenario(hami_helpers.HAMI_EXAMPLE, "stage", hami_helpers.HEALTHY, hami_helpers.BROKEN),
    dra.NAME: Scenario(dra_helpers.DRA_EXAMPLE, "train", dra_helpers.HEALTHY, dra_helpers.BROKEN),
    device_plugin.NAME: Scenario(
        device_plugin_helpers.DEVICE_PLUGIN_EXAMPLE, "lab", device_plugin_helpers.HEALTHY, device_plugin_helpers.BROKEN
    ),
}
