"""A verify backend with one wrong signature, deliberately: mypy must refuse it as a row of the verify registry.

Everything but ``daemonsets`` is the GPU Operator backend's own; ``daemonsets`` takes a pool it is never given.
"""

from __future__ import annotations

from gpustack_gen.model.fleet import Cluster, Pool
from gpustack_gen.verify.backends import gpu_operator as real

NAME = real.NAME
REGISTRATION_PARTS = real.REGISTRATION_PARTS
capacity_causes = real.capacity_causes
not_advertised_causes = real.not_advertised_causes
registration = real.registration
rollout_role = real.rollout_role
state_parts = real.state_parts
unlabelled = real.unlabelled
unwanted_daemonsets = real.unwanted_daemonsets


def daemonsets(cluster: Cluster, pool: Pool) -> tuple[str, ...]:
    return (pool.name,)
