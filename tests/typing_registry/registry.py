"""Registry rows written as the real registries write them: the broken backend beside a real one."""

from __future__ import annotations

from collections.abc import Mapping

import broken_backend

from gpustack_gen.compile.backends import BackendCompilers, gpu_operator

ROWS: Mapping[str, BackendCompilers] = {
    "gpu-operator": gpu_operator,
    "broken": broken_backend,  # refused
}
BROKEN: BackendCompilers = broken_backend  # refused, and mypy names the member that conflicts
