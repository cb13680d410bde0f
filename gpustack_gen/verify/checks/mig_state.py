"""The mig-manager failed or has not finished on a node, or the MIG devices GFD reports are not the pool's layout.

Applies to pools whose nodes carry ``nvidia.com/mig.config`` (the backend's ``pool_labels``). The
mig-manager sets ``nvidia.com/mig.config.state`` to ``pending``, ``rebooting``, then ``success`` or
``failed``; after a failure it waits until the label changes or its pod restarts (mig-parted
``cmd/nvidia-mig-manager/main.go``). A GPU held by a pod makes the apply fail (``failed``), so busy GPUs do not
leave it ``pending``; v0.15.0 leaves it ``pending`` when the paused operands' pods are not gone within 5 minutes
(``pkg/mig/reconfigure/reconfigure.go:170-172``). A node ``pending`` is in progress (:mod:`..in_progress`). GFD labels the MIG devices it finds: ``nvidia.com/mig-<profile>.count``
under the mixed strategy, ``nvidia.com/gpu.product`` ``<model>-MIG-<profile>`` with ``nvidia.com/gpu.count``
under single (k8s-device-plugin ``internal/lm/mig-strategy.go``). Under single a layout of several profiles is
labelled ``<model>-MIG-INVALID`` with count 0: only DRA allows such a pool (the device plugin is off), and there
``capacity-mismatch`` compares the MIG devices the node publishes in its ResourceSlices instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...catalog import PRODUCT_LABEL
from ...compile.artifact import MIG_CONFIG_LABEL, MIG_CONFIG_STATE_LABEL
from ...errors import Severity
from ...k8s_state import Node
from ...shell import Command, Pipe, bound_command, kubectl
from .. import commands
from ..expected import Expected, PoolExpectation
from ..model import Finding, differs
from ..observed import GPU_COUNT_LABEL, Observed, count

ID = "mig-state"
NEEDS = ("nodes",)

_MIXED_COUNT = re.compile(r"nvidia\.com/mig-(.+)\.count\Z")
_SINGLE_PRODUCT = re.compile(r"-MIG-(.+?)(-SHARED)?\Z")


def findings(expected: Expected, observed: Observed) -> Iterator[Finding]:
    cluster = expected.cluster
    namespace = cluster.operator.namespace
    for pool in expected.pools:
        if MIG_CONFIG_LABEL not in pool.labels:
            continue
        for node in observed.nodes_of(pool):
            state = node.labels.get(MIG_CONFIG_STATE_LABEL)
            # kubectl logs takes no --field-selector: the node's pod is found by kubectl get, its name piped on
            find = kubectl(
                "-n", namespace, "get", "pods", "-l", "app=nvidia-mig-manager",
                "--field-selector", f"spec.nodeName={node.name}", "-o", "name",
            )  # fmt: skip
            logs = Command(("xargs", *bound_command(kubectl("-n", namespace, "logs"), cluster.kube_context).argv))
            retry = (
                f"{commands.shown(cluster, Pipe((find, logs)))} "
                "(after the fix, delete that pod to retry; do not switch to another config)"
            )
            if state == "failed":
                yield _finding(
                    Severity.ERROR, pool, node, f"label {MIG_CONFIG_STATE_LABEL}", "success", state,
                    f"the mig-manager could not apply {node.labels.get(MIG_CONFIG_LABEL)}: a GPU in use, or a config "
                    f"missing from its ConfigMap; {retry}",
                )  # fmt: skip
            elif state in ("pending", "rebooting"):
                yield _finding(
                    Severity.WARNING, pool, node, f"label {MIG_CONFIG_STATE_LABEL}", "success", state,
                    "the mig-manager is repartitioning the node, its operands paused until it sets success (a GPU a "
                    "pod still holds makes it go failed, not wait; mig-manager v0.15.0 stays pending with the operands "
                    f"paused when one of their pods is not deleted within 5 minutes); {retry}",
                )  # fmt: skip
            wanted, found = _devices(expected, pool), _reported(node)
            if found is not None and wanted is not None and wanted != found and state not in ("pending", "rebooting"):
                yield _finding(
                    Severity.ERROR, pool, node, "MIG devices", wanted, found,
                    f"the node's GPUs are not partitioned as {pool.labels[MIG_CONFIG_LABEL]} says: check "
                    f"{MIG_CONFIG_LABEL} and {MIG_CONFIG_STATE_LABEL}; {retry}",
                )  # fmt: skip


def _finding(
    severity: Severity, pool: PoolExpectation, node: Node, subject: str, want: object, got: object, hint: str
) -> Finding:
    return Finding(ID, severity, subject, differs(subject, want, got), pool.name, node.name, want, got, hint)


def _devices(expected: Expected, pool: PoolExpectation) -> dict[str, int] | None:
    """MIG profile -> devices per node, as the pool's layout says, with profiles named as GFD names them; None when
    GFD cannot label the layout (several profiles under single)."""
    single = expected.cluster.mig_strategy == "single"
    if single and len(pool.pool.mig_devices()) > 1:
        return None
    devices: dict[str, int] = {}
    for name, per_gpu in pool.pool.mig_devices():
        profile = pool.pool.gpu.profile(name)
        if profile is None:
            key = name
        else:
            key = profile.label_suffix if single else profile.resource_name.removeprefix("nvidia.com/mig-")
        devices[key] = devices.get(key, 0) + per_gpu * pool.pool.gpus_per_node
    return devices


def _reported(node: Node) -> dict[str, int] | None:
    """The MIG devices GFD labels the node with; None when GFD has not labelled it."""
    product = node.labels.get(PRODUCT_LABEL)
    if product is None:
        return None
    found = {}
    for label, value in node.labels.items():
        match = _MIXED_COUNT.match(label)
        if match and (count(value) or 0) > 0:
            found[match.group(1)] = count(value) or 0
    single = _SINGLE_PRODUCT.search(product)
    if single and single.group(1) != "INVALID":
        found[single.group(1)] = count(node.labels.get(GPU_COUNT_LABEL)) or 0
    return found
