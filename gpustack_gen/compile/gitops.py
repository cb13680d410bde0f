"""GitOps delivery wrappers: Argo CD Application, Flux source + HelmRelease and helmfile.

Every wrapper carries exactly :func:`~gpustack_gen.compile.operator.operator_settings` (inline, or the
values file for helmfile) and the chart version the values were written for, so that the two cannot
drift apart. Ordering, where each tool does it:

- the Namespace (``namespace.py``) and the ConfigMaps are plain objects of ``kustomization.yaml``; the Argo CD Application
  carries sync wave 1, so a parent Application syncing the folder creates them (wave 0) first, and the
  ConfigMaps stay byte-identical whether wrapping is on or off;
- Flux applies the folder's kustomization in one pass; a HelmRelease ``dependsOn`` can only name other
  HelmReleases, and the Operator reads the ConfigMaps only when it deploys the device plugin and the MIG
  manager, long after the release is installed; install and upgrade are retried;
- helmfile applies the Namespace and ConfigMaps in a ``presync`` hook.

A backend that installs no Operator (the standalone device plugin chart) gets its own charts' wrappers alone.
A backend's own Helm releases (HAMi's chart, the DRA driver's) get the same wrappers beside the Operator's,
after it: Argo CD sync wave 2, a Flux ``dependsOn`` on the Operator's HelmRelease, helmfile ``needs``. A chart
published by OCI (the DRA driver from 0.4.0, on registry.k8s.io) is an Argo CD OCI source (``repoURL:
oci://...``, ``path: .``; Argo CD 3.1 and later), a Flux ``OCIRepository`` the HelmRelease names by
``chartRef``, and a helmfile repository with ``oci: true``. A repository two charts share (NVIDIA's, for the
Operator and the DRA driver 25.12.0) is declared once.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..model.fleet import WRAP_TARGETS, Cluster
from .artifact import MANAGED_BY, Artifact
from .backends import backend_of
from .kustomization import apply_folder
from .operator import CHART, HELM_REPOSITORY, HELM_REPOSITORY_NAME, RELEASE_NAME, VALUES_FILE, operator_settings
from .releases import OCI_SCHEME, ChartRelease

# The Argo CD and Flux objects that deliver the charts live in a folder of their own, applied at the plan's
# Operator step: in the cluster folder, the first `kubectl apply -k` (or the parent Application's sync) would hand
# the new values to the controller at once, which syncs them before any drain could run (real-world.md §2
# "Separate folders"; argo-cd v3.5.1 controller/appcontroller.go:2666-2706, helm-controller v1.6.3
# internal/controller/helmrelease_manager.go:126-136).
DELIVERY_FOLDER = "delivery"
ARGOCD_FILE = f"{DELIVERY_FOLDER}/argocd-application.yaml"
FLUX_FILE = f"{DELIVERY_FOLDER}/flux-helmrelease.yaml"
HELMFILE_FILE = "helmfile.yaml"
ARGOCD_SYNC_WAVE = "1"
BACKEND_SYNC_WAVE = "2"  # a backend's own chart (HAMi) after the Operator, which brings the driver and toolkit
REMEDIATION_RETRIES = 3
HELM_CHART_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"

# Artifact kinds that are Kubernetes objects (listed in delivery/kustomization.yaml) and that the gitops schema checks.
KUBERNETES_KINDS = ("argocd-application", "flux-helmrelease")
GITOPS_KINDS = ("namespace", *KUBERNETES_KINDS, "helmfile")


WRAPPERS = WRAP_TARGETS


def wrap_targets(cluster: Cluster, extra: tuple[str, ...] | list[str] = ()) -> tuple[str, ...]:
    """The fleet file's wrappers for ``cluster`` plus ``extra`` (``render --wrap``, checked by the caller)."""
    wanted = set(cluster.delivery.wrap) | set(extra)
    return tuple(t for t in WRAPPERS if t in wanted)


def ignored_clusterpolicy_fields(cluster: Cluster) -> tuple[tuple[str, str], ...]:
    """ClusterPolicy fields the API server fills in although the chart does not render them: (pointer, why).

    Without these, Argo CD reports the ClusterPolicy OutOfSync forever (gpu-operator#2795). Only fields
    that gpustack-gen's values leave to the chart are listed, and only for the chart versions where the
    CRD defaults them and the template leaves them out; a field the values set is never ignored.
    """
    operator = cluster.operator
    release = operator.release
    fields: list[tuple[str, str]] = []
    if not release.has_cdi_default:
        fields.append(
            (
                "/spec/cdi/default",
                "deprecated and unused from v25.10.0: the chart no longer renders it, the CRD still defaults it "
                "to false (gpu-operator#2795)",
            )
        )
    if release.at_least("v25.3.0") and not release.at_least("v26.3.0"):
        fields.append(
            (
                "/spec/operator/defaultRuntime",
                "removed from the chart in v25.3.0 (the runtime is detected), the CRD defaults it to docker "
                "until v26.3.0",
            )
        )
    if (
        release.at_least("v24.6.0")
        and not release.dynamic_mig_config
        and "migManager" not in operator_settings(cluster)
    ):
        fields.append(
            (
                "/spec/migManager/config/name",
                "the chart renders the empty default name, which the CRD turns into default-mig-parted-config",
            )
        )
    if release.has_nri_plugin and not (operator.cdi_enabled and operator.nri_plugin_enabled):
        fields.append(
            (
                "/spec/cdi/nriPluginEnabled",
                "rendered only when CDI and the NRI plugin are both on, otherwise the CRD defaults it to false",
            )
        )
    if release.at_least("v26.3.0"):
        fields.append(
            (
                "/spec/hostPaths/kubeletRootDir",
                "commented out in the chart values, the CRD defaults it to /var/lib/kubelet",
            )
        )
    return tuple(fields)


def argocd_application(cluster: Cluster) -> Artifact:
    backend_releases = backend_of(cluster).releases(cluster)
    if not backend_of(cluster).INSTALLS_OPERATOR:
        # A backend that installs no Operator (the hosts bring the driver): its own charts alone.
        alone = [
            f"Argo CD Application {r.name}-{cluster.name}: chart {r.chart} {r.version} from {r.repository_url} "
            f"with the values of {r.values_file} inline, sync wave {BACKEND_SYNC_WAVE} (after the Namespace)."
            for r in backend_releases
        ]
        applications = tuple(_release_application(cluster, r) for r in backend_releases)
        return Artifact(ARGOCD_FILE, "argocd-application", applications, (*alone, *_manual_sync(cluster)))
    release = cluster.operator.release
    settings = cluster.delivery.argocd
    destination: dict[str, Any] = {"name": settings.name} if settings.name is not None else {"server": settings.server}
    destination["namespace"] = cluster.operator.namespace
    spec: dict[str, Any] = {
        "project": settings.project,
        "source": {
            "repoURL": HELM_REPOSITORY,
            "chart": CHART,
            "targetRevision": release.version,
            "helm": {"releaseName": RELEASE_NAME, "valuesObject": operator_settings(cluster)},
        },
        "destination": destination,
        "syncPolicy": _sync_policy(cluster),
    }
    ignored = ignored_clusterpolicy_fields(cluster)
    if ignored:
        spec["ignoreDifferences"] = [
            {
                "group": "nvidia.com",
                "kind": "ClusterPolicy",
                "name": "cluster-policy",
                "jsonPointers": [pointer for pointer, _ in ignored],
            }
        ]
    document = _application(cluster, f"{RELEASE_NAME}-{cluster.name}", ARGOCD_SYNC_WAVE, spec)
    notes = [
        f"Argo CD Application: chart {CHART} {release.version} from {HELM_REPOSITORY}, with the values of",
        f"{VALUES_FILE} inline. Sync wave {ARGOCD_SYNC_WAVE}: a parent Application syncing kustomization.yaml",
        "creates the Namespace and ConfigMaps (wave 0) before it. CreateNamespace=true creates the Operator",
        "namespace when missing; ServerSideApply=true keeps the last-applied annotation (256 KiB at most) off",
        "the chart's large CRDs, which Argo CD applies on every sync.",
    ]
    if ignored:
        notes.append("ignoreDifferences: ClusterPolicy fields the API server defaults but the chart does not render:")
        notes += [f"- {pointer}: {why}" for pointer, why in ignored]
    else:
        notes.append(f"No ClusterPolicy field needs ignoreDifferences with chart {release.version} and these values.")
    documents = [document, *(_release_application(cluster, r) for r in backend_releases)]
    notes += [
        f"Application {r.name}-{cluster.name}: chart {r.chart} {r.version} from {r.repository_url} with the values of "
        f"{r.values_file}, sync wave {BACKEND_SYNC_WAVE} (after the Operator)."
        + (" An OCI source: Argo CD 3.1 or newer." if r.oci else "")
        for r in backend_releases
    ]
    return Artifact(ARGOCD_FILE, "argocd-application", tuple(documents), tuple(notes + _manual_sync(cluster)))


def _manual_sync(cluster: Cluster) -> list[str]:
    if cluster.delivery.argocd.automated:
        return []
    return ["Sync is manual: set delivery.argocd.syncPolicy.automated in the fleet file to sync on change."]


def _sync_policy(cluster: Cluster) -> dict[str, Any]:
    settings = cluster.delivery.argocd
    sync_policy: dict[str, Any] = {}
    if settings.automated:
        sync_policy["automated"] = {"prune": settings.prune, "selfHeal": settings.self_heal}
    sync_policy["syncOptions"] = ["CreateNamespace=true", "ServerSideApply=true"]
    return sync_policy


def _application(cluster: Cluster, name: str, wave: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {
            "name": name,
            "namespace": cluster.delivery.argocd.namespace,
            "labels": dict(MANAGED_BY),
            "annotations": {"argocd.argoproj.io/sync-wave": wave},
        },
        "spec": spec,
    }


def _release_application(cluster: Cluster, release: ChartRelease) -> dict[str, Any]:
    settings = cluster.delivery.argocd
    destination: dict[str, Any] = {"name": settings.name} if settings.name is not None else {"server": settings.server}
    destination["namespace"] = release.namespace
    # An OCI chart is an OCI source: its URL names the chart, and path "." takes the whole chart (Argo CD
    # user-guide/oci.md: "In the case of OCI Helm charts ... the path should always be set to .").
    chart = {"path": "."} if release.oci else {"chart": release.chart}
    source_url = release.reference if release.oci else release.repository_url
    spec: dict[str, Any] = {
        "project": settings.project,
        "source": {
            "repoURL": source_url,
            **chart,
            "targetRevision": release.version,
            "helm": {"releaseName": release.name, "valuesObject": release.values},
        },
        "destination": destination,
        "syncPolicy": _sync_policy(cluster),
    }
    return _application(cluster, f"{release.name}-{cluster.name}", BACKEND_SYNC_WAVE, spec)


def flux_helmrelease(cluster: Cluster) -> Artifact:
    if not backend_of(cluster).INSTALLS_OPERATOR:
        documents: list[dict[str, Any]] = []
        notes = [
            f"Flux: {_flux_release(cluster, r, documents, after_operator=False)} and HelmRelease {r.name} (chart "
            f"{r.chart} {r.version}, values of {r.values_file}); install and upgrade retried {REMEDIATION_RETRIES} times."
            for r in backend_of(cluster).releases(cluster)
        ]
        return Artifact(FLUX_FILE, "flux-helmrelease", tuple(documents), tuple(notes))
    release = cluster.operator.release
    settings = cluster.delivery.flux
    release_spec: dict[str, Any] = {
        "interval": settings.interval,
        "releaseName": settings.release_name,
        "targetNamespace": cluster.operator.namespace,
        "storageNamespace": cluster.operator.namespace,
    }
    if settings.source == "oci":
        assert settings.url is not None  # checked when the fleet was loaded
        source = _oci_repository(cluster, CHART, settings.url, release.version)
        release_spec["chartRef"] = {"kind": "OCIRepository", "name": CHART}
        origin = [
            f"OCIRepository {CHART} ({settings.url}, tag {release.version}). NVIDIA documents no OCI location for",
            "released gpu-operator charts: this is your mirror; push the chart there at this version (helm push).",
        ]
    else:
        url = settings.url or HELM_REPOSITORY
        source = _helm_repository(cluster, HELM_REPOSITORY_NAME, url)
        release_spec["chart"] = {
            "spec": {
                "chart": CHART,
                "version": release.version,
                "sourceRef": {"kind": "HelmRepository", "name": HELM_REPOSITORY_NAME},
            }
        }
        origin = [f"HelmRepository {HELM_REPOSITORY_NAME} ({url}), chart {CHART} {release.version}."]
    release_spec["install"] = {
        "createNamespace": True,
        "crds": "CreateReplace",
        "remediation": {"retries": REMEDIATION_RETRIES},
    }
    release_spec["upgrade"] = {"crds": "CreateReplace", "remediation": {"retries": REMEDIATION_RETRIES}}
    release_spec["values"] = operator_settings(cluster)
    helm_release = {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": RELEASE_NAME, **_flux_metadata(cluster)},
        "spec": release_spec,
    }
    notes = [
        f"Flux: the chart source and HelmRelease {RELEASE_NAME} into namespace {cluster.operator.namespace},",
        f"with the values of {VALUES_FILE} inline. " + " ".join(origin),
        "install.crds and upgrade.crds CreateReplace: helm upgrade alone never updates the chart's CRDs.",
        f"Failed installs and upgrades are retried {REMEDIATION_RETRIES} times. Applied with kustomization.yaml:",
        "the Namespace and ConfigMaps land in the same pass (a HelmRelease dependsOn can only name other",
        "HelmReleases), and the Operator reads them only when it deploys the device plugin and MIG manager.",
    ]
    documents = [source, helm_release]
    for backend_release in backend_of(cluster).releases(cluster):
        source_text = _flux_release(cluster, backend_release, documents)
        notes.append(
            f"{source_text} and HelmRelease {backend_release.name} (chart {backend_release.chart} "
            f"{backend_release.version}, values of {backend_release.values_file}), after the Operator's (dependsOn "
            f"{RELEASE_NAME})."
        )
    return Artifact(FLUX_FILE, "flux-helmrelease", tuple(documents), tuple(notes))


def _flux_metadata(cluster: Cluster) -> dict[str, Any]:
    return {"namespace": cluster.delivery.flux.namespace, "labels": dict(MANAGED_BY)}


def _helm_repository(cluster: Cluster, name: str, url: str) -> dict[str, Any]:
    return {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "HelmRepository",
        "metadata": {"name": name, **_flux_metadata(cluster)},
        "spec": {"interval": cluster.delivery.flux.interval, "url": url},
    }


def _oci_repository(cluster: Cluster, name: str, url: str, tag: str) -> dict[str, Any]:
    """The chart ``url`` names at ``tag``, its chart layer only (Flux pulls it as the HelmRelease's chartRef)."""
    return {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "OCIRepository",
        "metadata": {"name": name, **_flux_metadata(cluster)},
        "spec": {
            "interval": cluster.delivery.flux.interval,
            "url": url,
            "ref": {"tag": tag},
            "layerSelector": {"mediaType": HELM_CHART_LAYER, "operation": "copy"},
        },
    }


def _flux_release(
    cluster: Cluster, release: ChartRelease, documents: list[dict[str, Any]], *, after_operator: bool = True
) -> str:
    """Appends the release's source (unless an equal one is there already) and HelmRelease to ``documents``; the
    source in words, for the notes. A source named as another one that differs (the Operator's repository on a
    mirror) is named after the release instead. ``after_operator``: the release waits for the Operator's."""
    settings = cluster.delivery.flux
    if release.oci:
        source = _oci_repository(cluster, release.chart, release.reference, release.version)
    else:
        source = _helm_repository(cluster, release.repository_name, release.repository_url)
    kind, name = source["kind"], source["metadata"]["name"]
    taken = next((d for d in documents if (d["kind"], d["metadata"]["name"]) == (kind, name)), None)
    if taken is not None and taken != source:
        name = source["metadata"]["name"] = release.name
    if taken != source:
        documents.append(source)
    chart: dict[str, Any] = (
        {"chartRef": {"kind": kind, "name": name}}
        if release.oci
        else {
            "chart": {
                "spec": {"chart": release.chart, "version": release.version, "sourceRef": {"kind": kind, "name": name}}
            }
        }
    )
    documents.append(
        {
            "apiVersion": "helm.toolkit.fluxcd.io/v2",
            "kind": "HelmRelease",
            "metadata": {"name": release.name, **_flux_metadata(cluster)},
            "spec": {
                "interval": settings.interval,
                "releaseName": release.name,
                "targetNamespace": release.namespace,
                "storageNamespace": release.namespace,
                **chart,
                **({"dependsOn": [{"name": RELEASE_NAME}]} if after_operator else {}),
                "install": {"createNamespace": True, "remediation": {"retries": REMEDIATION_RETRIES}},
                "upgrade": {"remediation": {"retries": REMEDIATION_RETRIES}},
                "values": release.values,
            },
        }
    )
    shared = " (the Operator's)" if taken == source else ""
    return f"{kind} {name}{shared}"


def helmfile(cluster: Cluster, objects: list[Artifact]) -> Artifact:
    """``objects`` are the namespace and the ConfigMaps, applied in a presync hook."""
    release = cluster.operator.release
    apply_args = ["--context", cluster.kube_context, "apply"]  # hooks run in the shell's current context
    for artifact in objects:
        apply_args += ["-f", artifact.path]
    presync = [{"events": ["presync"], "showlogs": True, "command": "kubectl", "args": apply_args}]
    backend_releases = backend_of(cluster).releases(cluster)
    if not backend_of(cluster).INSTALLS_OPERATOR:
        return _helmfile_releases_only(cluster, backend_releases, presync)
    repositories = [{"name": HELM_REPOSITORY_NAME, "url": HELM_REPOSITORY}]
    for r in backend_releases:
        entry = _helmfile_repository(r)
        if entry not in repositories:
            repositories.append(entry)
    document = {
        "helmDefaults": {"kubeContext": cluster.kube_context},  # helmfile passes helm --kube-context
        "repositories": repositories,
        "releases": [
            {
                "name": RELEASE_NAME,
                "namespace": cluster.operator.namespace,
                "createNamespace": True,
                "chart": f"{HELM_REPOSITORY_NAME}/{CHART}",
                "version": release.version,
                "values": [VALUES_FILE],
                "hooks": presync,
            },
            *(
                {
                    "name": r.name,
                    "namespace": r.namespace,
                    "createNamespace": True,
                    "chart": f"{r.repository_name}/{r.chart}",
                    "version": r.version,
                    "values": [r.values_file],
                    "needs": [f"{cluster.operator.namespace}/{RELEASE_NAME}"],
                }
                for r in backend_releases
            ),
        ],
    }
    crds = (
        "helm upgrade does not update CRDs; the chart's operator.upgradeCRD hook (on by default) does."
        if release.at_least("v24.9.2")
        else "helm upgrade does not update CRDs: apply the chart's crds/ folder before upgrading."
    )
    return Artifact(
        HELMFILE_FILE,
        "helmfile",
        (document,),
        (
            f"helmfile: release {RELEASE_NAME}, chart {HELM_REPOSITORY_NAME}/{CHART} {release.version}, values "
            f"{VALUES_FILE}. Run from this folder: helmfile apply",
            f"The presync hook applies the Namespace and ConfigMaps first, with kubectl --context {cluster.kube_context};",
            "helmDefaults.kubeContext makes helm reach the same cluster whatever the current context is.",
            crds,
            *(
                f"Release {r.name}: chart {r.reference} {r.version}, values {r.values_file}, after the Operator (needs)."
                for r in backend_releases
            ),
        ),
    )


def _helmfile_releases_only(
    cluster: Cluster, releases: tuple[ChartRelease, ...], presync: list[dict[str, Any]]
) -> Artifact:
    """helmfile for a backend that installs no GPU Operator: its charts, the first applying the Namespace first."""
    repositories: list[dict[str, Any]] = []
    for r in releases:
        entry = _helmfile_repository(r)
        if entry not in repositories:
            repositories.append(entry)
    entries = [
        {
            "name": r.name,
            "namespace": r.namespace,
            "createNamespace": True,
            "chart": f"{r.repository_name}/{r.chart}",
            "version": r.version,
            "values": [r.values_file],
            **({"hooks": presync} if index == 0 else {}),
        }
        for index, r in enumerate(releases)
    ]
    document = {
        "helmDefaults": {"kubeContext": cluster.kube_context},
        "repositories": repositories,
        "releases": entries,
    }
    notes = [
        f"helmfile: release {r.name}, chart {r.reference} {r.version}, values {r.values_file}. Run from this folder: "
        "helmfile apply"
        for r in releases
    ]
    notes += [
        f"The presync hook applies the Namespace first, with kubectl --context {cluster.kube_context};",
        "helmDefaults.kubeContext makes helm reach the same cluster whatever the current context is.",
    ]
    return Artifact(HELMFILE_FILE, "helmfile", (document,), tuple(notes))


def _helmfile_repository(release: ChartRelease) -> dict[str, Any]:
    """helmfile names an OCI registry by its host and path, without the scheme, and marks it ``oci: true``; its
    charts are ``<name>/<chart>`` as in any repository (helmfile docs/configuration.md)."""
    if release.oci:
        return {"name": release.repository_name, "url": release.repository_url.removeprefix(OCI_SCHEME), "oci": True}
    return {"name": release.repository_name, "url": release.repository_url}


def delivery_artifacts(cluster: Cluster, targets: tuple[str, ...], objects: list[Artifact]) -> list[Artifact]:
    """The wrappers ``targets`` asks for (none when not wrapping)."""
    artifacts: list[Artifact] = []
    if "argocd" in targets:
        artifacts.append(argocd_application(cluster))
    if "flux" in targets:
        artifacts.append(flux_helmrelease(cluster))
    if "helmfile" in targets:
        artifacts.append(helmfile(cluster, objects))
    return artifacts


def wrapped_kustomization(base: Artifact, targets: tuple[str, ...]) -> Artifact:
    """``kustomization.yaml`` notes once the cluster is delivered by Argo CD or Flux."""
    tools = _tools(targets)
    if not tools:
        return base
    notes: tuple[str, ...] = (
        f"The Namespace and the ConfigMaps: point {' or '.join(tools)} at this folder. The {' and '.join(tools)} "
        f"objects that deliver the charts are in {DELIVERY_FOLDER}/, applied after it (gpustack-gen plan says when).",
    )
    return dataclasses.replace(base, notes=notes)


def delivery_kustomization(wrappers: list[Artifact], context: str) -> Artifact | None:
    """``delivery/kustomization.yaml``: the Argo CD and Flux objects, None when the cluster has none; ``context``:
    the kube context its header's command names."""
    listed = [a for a in wrappers if a.kind in KUBERNETES_KINDS]
    if not listed:
        return None
    tools = _tools(tuple(a.kind.split("-")[0] for a in listed))
    notes = [
        f"The {' and '.join(tools)} objects that deliver the charts. Apply this folder ({apply_folder(context)}) at the",
        "plan's Operator step, after the cluster folder and any drain: the controller acts on the new values at once.",
    ]
    if len(tools) > 1:
        notes.append("Both the Argo CD Application and the Flux HelmRelease are listed: keep only one per cluster.")
    document = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [a.path.removeprefix(f"{DELIVERY_FOLDER}/") for a in listed],
    }
    return Artifact(f"{DELIVERY_FOLDER}/kustomization.yaml", "kustomization", (document,), tuple(notes))


def _tools(targets: tuple[str, ...]) -> list[str]:
    return [name for name, target in (("Argo CD", "argocd"), ("Flux", "flux")) if target in targets]
