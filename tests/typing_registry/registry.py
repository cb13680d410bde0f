"""Registry rows written as the real registries write them: each broken backend beside a real one."""

from __future__ import annotations

from collections.abc import Mapping

import broken_backend
import broken_rule
import broken_semantics
import broken_verify_backend

from gpustack_gen.change.rules import Rule, cluster_added
from gpustack_gen.compile.backends import BackendCompilers, gpu_operator
from gpustack_gen.model.backends import BackendSemantics
from gpustack_gen.model.backends import gpu_operator as model_gpu_operator
from gpustack_gen.verify.backends import VerifyBackend
from gpustack_gen.verify.backends import gpu_operator as verify_gpu_operator

ROWS: Mapping[str, BackendCompilers] = {
    "gpu-operator": gpu_operator,
    "broken": broken_backend,  # refused
}
BROKEN: BackendCompilers = broken_backend  # refused, and mypy names the member that conflicts

SEMANTICS: Mapping[str, BackendSemantics] = {
    "gpu-operator": model_gpu_operator,
    "broken": broken_semantics,  # refused
}
BROKEN_SEMANTICS: BackendSemantics = broken_semantics  # refused, and mypy names the member that conflicts

VERIFY_BACKENDS: Mapping[str, VerifyBackend] = {
    "gpu-operator": verify_gpu_operator,
    "broken": broken_verify_backend,  # refused
}
BROKEN_VERIFY: VerifyBackend = broken_verify_backend  # refused, and mypy names the member that conflicts

RULES: tuple[Rule, ...] = (cluster_added,)
BROKEN_RULES: tuple[Rule, ...] = (cluster_added, broken_rule)  # refused
BROKEN_RULE: Rule = broken_rule  # refused, and mypy names the member that conflicts
