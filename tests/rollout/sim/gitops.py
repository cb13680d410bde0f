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
* Neither acts while ``kubectl apply`` returns: the change is queued and handled seconds later (research
  real-world.md §2, "starts the chart sync seconds later, while the runbook goes on"). Until then the
  Application's ``status.sync.status`` and ``status.health.status`` still say what the controller last wrote, so a
  jsonpath wait on them passes on the old values; ``kubectl wait --for=condition=Ready`` on a HelmRelease does not,
  as it skips a condition whose observedGeneration is below the object's generation
  (kubernetes/kubectl@v0.29.0 pkg/cmd/wait/wait.go:562-591,613-620).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .cluster import Cluster, SimulationError

OPERATOR_CHART = "gpu-operator"
REACTION_SECONDS = 5  # from the apply to the controller handling the queued change (not measured)


@dataclass
class Controllers:
    cluster: Cluster
    owner: str | None = None  # "argocd" | "flux" once one delivers the Operator's chart
    applications: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> spec
    synced: set[str] = field(default_factory=set)  # what the status says: synced (Argo CD) or Ready (Flux)
    kinds: dict[str, str] = field(default_factory=dict)  # name -> Application | HelmRelease
    queued: dict[str, float] = field(default_factory=dict)  # name -> when the controller handles its change

    def apply(self, document: dict[str, Any]) -> None:
        kind, name, spec = document["kind"], document["metadata"]["name"], document["spec"]
        if kind in ("HelmRepository", "OCIRepository"):
            return  # a source: nothing runs until a HelmRelease uses it
        if kind not in ("Application", "HelmRelease"):
            raise SimulationError(f"the model has no controller for {kind}")
        if self.applications.get(name) != spec:  # a new generation, handled when the queue gets to it
            self.applications[name] = spec
            self.kinds[name] = kind
            self.queued[name] = self.cluster.now + REACTION_SECONDS

    def step(self) -> None:
        """The controllers handle the changes whose time has come (the cluster's clock calls this)."""
        for name, due in sorted(self.queued.items()):
            if self.cluster.now < due:
                continue
            del self.queued[name]
            spec = self.applications[name]
            if self.kinds[name] == "HelmRelease":
                self._deliver("flux", name, spec.get("chart", {}).get("spec", {}).get("chart"), spec)
            elif "automated" in spec.get("syncPolicy", {}):
                self.sync_application(name)
            else:
                self.synced.discard(name)  # the refresh finds it OutOfSync; a manual sync follows

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

    def status_synced(self, name: str) -> bool:
        """What the Application's or HelmRelease's status says, however old."""
        return name in self.synced

    def ready_at_generation(self, name: str) -> bool:
        """``kubectl wait --for=condition=Ready``: Ready, at the current generation."""
        return name in self.synced and name not in self.queued

    def operator_queued(self) -> str | None:
        """The kind of the queued change that carries new values of the Operator's chart, if any."""
        for name in self.queued:
            spec = self.applications[name]
            chart = spec.get("source", {}).get("chart") or spec.get("chart", {}).get("spec", {}).get("chart")
            if chart == OPERATOR_CHART:
                return self.kinds[name]
        return None
