"""Helm releases a device backend installs beside the GPU Operator (HAMi's chart, the DRA driver's), and their
commands.

One description serves the values file's header, ``plan``'s install and upgrade steps, ``verify``'s fixes and
the GitOps wrappers, so that they name the same chart, version, namespace and values. A chart comes from a
Helm repository (``helm repo add``, then ``<repository>/<chart>``) or from an OCI registry (``oci://...``,
named in full, nothing to add first: Helm 3.8 and later).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..shell import Command, Script, all_of, helm, local_helm

OCI_SCHEME = "oci://"


def repo_add_command(name: str, url: str) -> Script:
    """Adding the name again with the same URL does nothing (helm v3 cmd/helm/repo_add.go); the update fetches the
    index that lists a newly pinned chart version (of that repository only: others may be unreachable from here).
    Both change only this machine's repository list, so they name no cluster."""
    return all_of(local_helm("repo", "add", name, url), local_helm("repo", "update", name))


@dataclass(frozen=True)
class ChartRelease:
    """One Helm release of a pinned chart with the values of one rendered file."""

    name: str  # the Helm release name
    chart: str
    repository_name: str  # as in `helm repo add <name> <url>`, and how helmfile names the repository
    repository_url: str  # https://... for a Helm repository; oci://<registry>/<path> for charts in a registry
    version: str
    namespace: str
    values_file: str  # the rendered file holding ``values``, relative to the cluster folder
    values: dict[str, Any] = field(compare=False)
    rollouts: tuple[str, ...] = ()  # what rolls out once it is installed, for `kubectl rollout status`

    @property
    def oci(self) -> bool:
        return self.repository_url.startswith(OCI_SCHEME)

    @property
    def reference(self) -> str:
        """The chart as ``helm upgrade`` takes it: ``<repository>/<chart>``, or its OCI URL."""
        return f"{self.repository_url}/{self.chart}" if self.oci else f"{self.repository_name}/{self.chart}"

    def repo_add_command(self) -> Script | None:
        """What makes ``reference`` resolvable; None for an OCI chart, which Helm pulls by its URL."""
        if self.oci:
            return None
        return repo_add_command(self.repository_name, self.repository_url)

    def upgrade_command(self, values_path: str | None = None) -> Command:
        """``helm upgrade --install`` with the whole values file: never ``--reuse-values``, which keeps the old
        chart's defaults across versions (helm ``pkg/action/upgrade.go`` ``reuseValues``)."""
        return helm(
            "upgrade", "--install", self.name, self.reference, "--namespace", self.namespace, "--create-namespace",
            "--version", self.version, "--values", values_path or self.values_file,
        )  # fmt: skip

    def install_commands(self, values_path: str | None = None) -> Script:
        """``helm repo add`` where the chart needs it, then ``helm upgrade --install``."""
        add = self.repo_add_command()
        return all_of(*((add,) if add else ()), self.upgrade_command(values_path))

    def uninstall_command(self) -> Command:
        return helm("uninstall", self.name, "--namespace", self.namespace, "--wait")
