"""Helm releases a device backend installs beside the GPU Operator (HAMi's chart), and their command.

One description serves the values file's header, ``plan``'s install and upgrade steps and the GitOps
wrappers, so that they name the same chart, version, namespace and values.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ChartRelease:
    """One Helm release of a pinned chart with the values of one rendered file."""

    name: str  # the Helm release name
    chart: str
    repository_name: str  # as in `helm repo add <name> <url>`
    repository_url: str
    version: str
    namespace: str
    values_file: str  # the rendered file holding ``values``, relative to the cluster folder
    values: dict[str, Any] = field(compare=False)
    rollouts: tuple[str, ...] = ()  # what rolls out once it is installed, for `kubectl rollout status`

    @property
    def reference(self) -> str:
        return f"{self.repository_name}/{self.chart}"

    def repo_add_command(self) -> str:
        return f"helm repo add {self.repository_name} {self.repository_url} && helm repo update"

    def upgrade_command(self, values_path: str | None = None) -> str:
        """``helm upgrade --install`` with the whole values file: never ``--reuse-values``, which keeps the old
        chart's defaults across versions (helm ``pkg/action/upgrade.go`` ``reuseValues``)."""
        return (
            f"helm upgrade --install {self.name} {self.reference} --namespace {self.namespace} --create-namespace "
            f"--version {self.version} --values {shlex.quote(values_path or self.values_file)}"
        )

    def uninstall_command(self) -> str:
        return f"helm uninstall {self.name} --namespace {self.namespace} --wait"
