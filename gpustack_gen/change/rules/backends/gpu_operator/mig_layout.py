"""A pool's MIG layout changes: drain, relabel ``nvidia.com/mig.config``, wait for ``success``, uncordon.

The mig-manager acts only when the label's value changes, reads the config from its mounted ConfigMap,
and never drains: it fails on GPUs in use (mig-parted ``cmd/nvidia-mig-manager/main.go``,
``reconfigure``). So the new config must be in the ConfigMap and synced before the label changes, the
nodes drained before it, and the old ``success`` cleared so that it cannot pass for the new result. The pool's
node-group template gets the new label first (a ``node-group`` step): a node an autoscaler adds for the pods a
drain leaves Pending is born with the template's labels of that moment (kubernetes-sigs/karpenter@v1.14.1
``pkg/apis/v1/nodepool.go:204-209``), and no later step, which selects the marked nodes, would change it.
"""

from __future__ import annotations

from collections.abc import Iterator

from .....model.backends.gpu_operator import NAME
from .....model.fleet import Pool
from .... import steps
from ....context import ClusterChange
from ....model import Finding, Level, Outcome

ID = "mig-layout"
LEVEL = Level.DISRUPTIVE


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if not change.on(NAME):
        return
    _, new = change.both
    for before, after in change.common_pools:
        if before.gpu.id != after.gpu.id:
            continue  # pool-gpu: the nodes are replaced
        old_label = change.old_names.mig_config_label(before)
        new_label = change.new_names.mig_config_label(after)
        if old_label == new_label or new_label is None:
            continue
        plan = steps.mig_relabel(
            change,
            after,
            new_label,
            ID,
            lambda batch: steps.allocatable(new, batch, ID),
            batched=steps.pods_fit_either_layout(change, before, after),
        )
        yield Outcome(
            Finding(
                ID,
                LEVEL,
                f"pool {after.name}: MIG layout changes ({_layout(before, old_label)} -> {_layout(after, new_label)}): "
                f"the {after.physical_gpus} GPUs of its {after.nodes} nodes are repartitioned and GPU pods on them "
                "are stopped; drain first",
                after.name,
                (after.name,),
            ),
            tuple(plan),
        )


def _layout(pool: Pool, label: str | None) -> str:
    devices = pool.mig_devices()
    if not devices:
        return label or "no MIG"
    text = ", ".join(name if count == 1 else f"{name} x{count}" for name, count in devices)
    return f"{label}: {text}" if label else text
