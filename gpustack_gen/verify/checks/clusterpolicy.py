"""The ClusterPolicy differs from the rendered patch, or the Operator does not report it ready.

Every field the rendered merge patch sets is compared, as the API server stores it: a field the patch deletes
holds the pinned CRD's default where it has one (``migManager.config.name`` up to v25.10.x, see
:mod:`..crd_defaults`), else it must be absent. The fields: the device plugin and mig-manager ConfigMaps and
defaults, ``mig.strategy``, CDI, the driver and the toolkit. The
Operator applies the ClusterPolicy to its operands; in v25.3.3 ``ready`` can show before a DaemonSet
finishes rolling (``isDaemonSetReady``), which ``operator-pods`` checks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...compile.operator import helm_upgrade_command, operator_repo_add, patch_command
from ...errors import Severity
from ...shell import all_of
from .. import commands
from ..expected import Expected
from ..model import Finding, differs
from ..observed import Observed

ID = "clusterpolicy"
NEEDS = ("clusterpolicy",)


def findings(expected: Expected, observed: Observed) -> Iterator[Finding]:
    policies = observed.state.clusterpolicies or ()
    if not policies:
        yield Finding(
            ID, Severity.ERROR, "ClusterPolicy", "no ClusterPolicy: the GPU Operator is not installed", None, None,
            "cluster-policy", None, _apply(expected),
        )  # fmt: skip
        return
    policy = policies[0]
    for path, want in _leaves(expected.clusterpolicy, "spec"):
        got = _at(policy.spec, path.split(".")[1:])
        if got != want:
            yield Finding(ID, Severity.ERROR, path, differs(path, want, got), None, None, want, got, _apply(expected))
    if policy.state != "ready":
        yield Finding(
            ID, Severity.ERROR, "status.state", differs("status.state", "ready", policy.state), None, None,
            "ready", policy.state,
            commands.run(expected.cluster, "get", "clusterpolicies.nvidia.com", "-o", "jsonpath={.items[0].status}")
            + " and " + commands.logs(expected.cluster, expected.cluster.operator.namespace, "deploy/gpu-operator")
            + " say which operand is not ready",
        )  # fmt: skip


def _apply(expected: Expected) -> str:
    cluster = expected.cluster
    folder = f"{expected.rendered}/{cluster.name}"
    if cluster.operator.install == "helm":
        upgrade = helm_upgrade_command(cluster, f"{folder}/gpu-operator-values.yaml")
        return f"apply the render: {commands.shown(cluster, all_of(operator_repo_add(), upgrade))}"
    return f"apply the render: {commands.shown(cluster, patch_command(f'{folder}/clusterpolicy-patch.yaml'))}"


def _leaves(data: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(data, dict) and data:
        for key, value in data.items():
            yield from _leaves(value, f"{path}.{key}")
    else:
        yield path, data


def _at(data: Any, keys: list[str]) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data
