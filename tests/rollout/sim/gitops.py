"""Argo CD and Flux as the model sees them: the controller that owns the Operator's release once its Application
or HelmRelease lands (research real-world.md §2).

* Argo CD: an Application's Add and Update handlers queue a refresh, which auto-syncs an OutOfSync Application
  whose syncPolicy is automated (argoproj/argo-cd@v3.5.1 controller/appcontroller.go:2666-2706,1954-1955,
  2322-2350); a manual one syncs when its ``operation`` field asks (Application CRD v3.5.1, ../shared/upstream/
  gitops/v3.5.1-application-crd.yaml:57). It renders with ``helm template`` and leaves no Helm release
  (docs/user-guide/helm.md:6), so a later ``helm upgrade --install`` is an install that fails on "invalid ownership
  metadata" (helm/helm@v3.21.4 pkg/action/validate.go:84,116).
* Flux: a HelmRelease reconciles on create and on every generation change (fluxcd/helm-controller@v1.6.3
  internal/controller/helmrelease_manager.go:126-136) with its own values and ResetValues
  (internal/action/upgrade.go:110-111); a release upgraded by hand is "Unmanaged" and upgraded back
  (internal/reconcile/state.go:114-125).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .cluster import Cluster, SimulationError

OPERATOR_CHART = "gpu-operator"


@dataclass
class Controllers:
    cluster: Cluster
    owner: str | None = None  # "argocd" | "flux" once one delivers the Operator's chart
    applications: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> spec
    synced: set[str] = field(default_factory=set)  # Applications / HelmReleases synced at their current spec

    def apply(self, document: dict[str, Any]) -> None:
        kind, name, spec = document["kind"], document["metadata"]["name"], document["spec"]
        if kind in ("HelmRepository", "OCIRepository"):
            return  # a source: nothing runs until a HelmRelease uses it
        if kind == "Application":
            changed = self.applications.get(name) != spec
            self.applications[name] = spec
            if changed:
                self.synced.discard(name)
            if "automated" in spec.get("syncPolicy", {}):
                self.sync_application(name)
            return
        if kind == "HelmRelease":
            if self.applications.get(name) != spec:  # a new generation: reconcile now
                self.applications[name] = spec
                self._deliver("flux", name, spec.get("chart", {}).get("spec", {}).get("chart"), spec)
            return
        raise SimulationError(f"the model has no controller for {kind}")

    def sync_application(self, name: str) -> None:
        if name not in self.applications:
            raise SimulationError(f'applications.argoproj.io "{name}" not found')
        spec = self.applications[name]
        source = spec["source"]
        self._deliver("argocd", name, source.get("chart"), {"values": source["helm"]["valuesObject"],
                                                             "version": source["targetRevision"]})  # fmt: skip

    def _deliver(self, owner: str, name: str, chart: str | None, spec: dict[str, Any]) -> None:
        self.synced.add(name)
        if chart != OPERATOR_CHART:
            return  # a backend's chart: the model follows the Operator's only
        if self.owner not in (None, owner):
            raise SimulationError(f"{owner} and {self.owner} both deliver the GPU Operator")
        version = spec.get("version") or spec["chart"]["spec"]["version"]
        self.owner = owner
        self.cluster.helm_upgrade(version, [spec["values"]], reuse=False, openapi_checked=False)

    def helm_upgrade_refused(self) -> None:
        """A person's ``helm upgrade`` of the Operator's release the controller owns."""
        if self.owner == "argocd":
            raise SimulationError(
                'Error: Unable to continue with install: ClusterPolicy "cluster-policy" in namespace "" exists and '
                "cannot be imported into the current release: invalid ownership metadata"
            )

    def reconcile_back(self) -> None:
        """Flux finds the release changed by hand and upgrades it back to the HelmRelease's values."""
        if self.owner != "flux":
            return
        for spec in self.applications.values():
            if spec.get("chart", {}).get("spec", {}).get("chart") == OPERATOR_CHART:
                version = spec["chart"]["spec"]["version"]
                self.cluster.helm_upgrade(version, [spec["values"]], reuse=False, openapi_checked=False)

    def is_synced(self, name: str) -> bool:
        return name in self.synced
