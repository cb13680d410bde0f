"""The Operator step of a cluster whose charts Argo CD or Flux deliver: apply the wrapper folder, let the
controller sync, wait until it has.

The controller owns the release, so the plan never runs ``helm upgrade`` there: Argo CD renders charts with
``helm template`` and leaves no Helm release, so an upgrade fails on "invalid ownership metadata" (argo-cd v3.5.1
docs/user-guide/helm.md:6; helm v3.21.4 pkg/action/validate.go:84,116); Flux upgrades back a release changed by
hand (helm-controller v1.6.3 internal/reconcile/state.go:114-125). The wrappers are outside the folder the first
step applies (compile.gitops.DELIVERY_FOLDER), so nothing hands the controller the new values before this step.
"""

from __future__ import annotations

import json
import posixpath

from ..compile.backends import backend_of
from ..compile.gitops import DELIVERY_FOLDER
from ..compile.operator import RELEASE_NAME
from ..model.fleet import Cluster
from ..shell import Script, all_of, kubectl
from ..workdir import Paths

# Argo CD's controller runs the sync an Application's `operation` field asks for, as `argocd app sync` sets it
# (Application CRD v3.5.1, spec field `operation`: ../shared/upstream/gitops/v3.5.1-application-crd.yaml:57).
_ARGOCD_SYNC = json.dumps({"operation": {"initiatedBy": {"username": "gpustack-gen"}, "sync": {}}}, sort_keys=True)


def controller(cluster: Cluster) -> str | None:
    """The GitOps controller that delivers the cluster's charts (argocd or flux), None for helm upgrade."""
    return next((target for target in cluster.delivery.wrap if target in ("argocd", "flux")), None)


def sync(cluster: Cluster, paths: Paths) -> Script:
    """Applies the wrapper folder; Argo CD with automated sync and Flux act on the changed object at once (argo-cd
    controller/appcontroller.go:2666-2706,2322-2350; helm-controller helmrelease_manager.go:126-136), a manual
    Argo CD Application is asked to sync."""
    apply = kubectl("apply", "-k", posixpath.join(paths.cluster_dir(cluster), DELIVERY_FOLDER))
    if controller(cluster) == "flux" or cluster.delivery.argocd.automated:
        return apply
    namespace = cluster.delivery.argocd.namespace
    syncs = (
        kubectl("patch", "applications.argoproj.io", name, "-n", namespace, "--type", "merge", "--patch", _ARGOCD_SYNC)
        for name in _argocd_applications(cluster)
    )
    return all_of(apply, *syncs)


def synced(cluster: Cluster, timeout: str = "20m") -> Script:
    """Waits until the controller reports each chart synced and healthy (Argo CD) or Ready (Flux)."""
    if controller(cluster) == "flux":
        namespace = cluster.delivery.flux.namespace
        return all_of(
            *(
                kubectl(
                    "wait",
                    f"helmreleases.helm.toolkit.fluxcd.io/{name}",
                    "-n",
                    namespace,
                    "--for=condition=Ready",
                    f"--timeout={timeout}",
                )
                for name in _releases(cluster)
            )
        )
    namespace = cluster.delivery.argocd.namespace
    return all_of(
        *(
            kubectl(
                "wait",
                f"applications.argoproj.io/{name}",
                "-n",
                namespace,
                f"--for=jsonpath={path}={value}",
                f"--timeout={timeout}",
            )
            for name in _argocd_applications(cluster)
            for path, value in (("{.status.sync.status}", "Synced"), ("{.status.health.status}", "Healthy"))
        )
    )


def _releases(cluster: Cluster) -> tuple[str, ...]:
    """The releases the controller delivers: the Operator's (where the backend installs it), then each backend
    chart's."""
    backend = backend_of(cluster)
    operator = (RELEASE_NAME,) if backend.INSTALLS_OPERATOR else ()
    return (*operator, *(r.name for r in backend.releases(cluster)))


def _argocd_applications(cluster: Cluster) -> list[str]:
    """The Applications compile.gitops names, one per release."""
    return [f"{name}-{cluster.name}" for name in _releases(cluster)]
