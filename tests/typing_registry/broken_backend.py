"""A compile backend with one wrong signature, deliberately: mypy must refuse it as a registry row.

Everything but ``operator_values`` is the GPU Operator backend's own; ``operator_values`` takes a pool it
is never given, which a registry that casts modules to their protocol would let through.
"""

from __future__ import annotations

from typing import Any

from gpustack_gen.compile.backends import gpu_operator as real
from gpustack_gen.model.fleet import Cluster, Pool

NAME = real.NAME
INSTALLS_OPERATOR = real.INSTALLS_OPERATOR
namespace = real.namespace
patch_only = real.patch_only
objects = real.objects
files = real.files
pool_labels = real.pool_labels
releases = real.releases
workload_values = real.workload_values
workload_notes = real.workload_notes
capacity_details = real.capacity_details


def operator_values(cluster: Cluster, pool: Pool) -> dict[str, Any]:
    return {"cluster": cluster.name, "pool": pool.name}
