"""The GitOps wrappers of a DRA cluster deliver the driver's chart after the Operator's: by OCI from
registry.k8s.io (0.4.x: an Argo CD OCI source, a Flux OCIRepository, a helmfile OCI repository), or from
NVIDIA's repository (25.12.0), which the Operator's chart shares. The upstream CRDs hold them in
test_gitops.py's conformance test."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from test_gitops import cluster_of, dra_fleet, notes_of, wrapped

from gpustack_gen import InternalError
from gpustack_gen.compile import compile_cluster
from gpustack_gen.compile.backends.dra.driver import dra_release, driver_values
from gpustack_gen.shell import lines_in
from gpustack_gen.validate.artifacts import validate_artifacts

OCI_CHART = "oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu"
NGC = "https://helm.ngc.nvidia.com/nvidia"
WRAPS = ("argocd", "flux", "helmfile")


def _values(data: dict[str, Any]) -> dict[str, Any]:
    return driver_values(cluster_of(data))


def test_an_oci_chart_is_an_argocd_oci_source_after_the_operator() -> None:
    data = dra_fleet("0.4.1")
    _, driver = wrapped(data, "argocd")["delivery/argocd-application.yaml"]
    assert driver["metadata"]["name"] == "nvidia-dra-driver-gpu-c1"
    assert driver["metadata"]["annotations"] == {"argocd.argoproj.io/sync-wave": "2"}
    assert driver["spec"]["source"] == {
        "repoURL": OCI_CHART,
        "path": ".",
        "targetRevision": "0.4.1",
        "helm": {"releaseName": "nvidia-dra-driver-gpu", "valuesObject": _values(data)},
    }
    assert driver["spec"]["destination"]["namespace"] == "nvidia-dra-driver-gpu"
    assert "An OCI source: Argo CD 3.1 or newer." in notes_of(data, "delivery/argocd-application.yaml", "argocd")


def test_an_oci_chart_is_a_flux_ocirepository_the_helmrelease_names() -> None:
    data = dra_fleet("0.4.1")
    _, operator, source, driver = wrapped(data, "flux")["delivery/flux-helmrelease.yaml"]
    assert (source["kind"], source["metadata"]["name"]) == ("OCIRepository", "dra-driver-nvidia-gpu")
    assert source["spec"]["url"] == OCI_CHART
    assert source["spec"]["ref"] == {"tag": "0.4.1"}
    assert driver["spec"]["chartRef"] == {"kind": "OCIRepository", "name": "dra-driver-nvidia-gpu"}
    assert "chart" not in driver["spec"]
    assert driver["spec"]["dependsOn"] == [{"name": operator["metadata"]["name"]}]
    assert driver["spec"]["values"] == _values(data)


def test_an_oci_chart_is_a_helmfile_oci_repository() -> None:
    (document,) = wrapped(dra_fleet("0.4.1"), "helmfile")["helmfile.yaml"]
    assert document["repositories"] == [
        {"name": "nvidia", "url": NGC},
        {"name": "dra-driver-nvidia", "url": "registry.k8s.io/dra-driver-nvidia/charts", "oci": True},
    ]
    operator, driver = document["releases"]
    assert (driver["chart"], driver["version"], driver["values"]) == (
        "dra-driver-nvidia/dra-driver-nvidia-gpu",
        "0.4.1",
        ["dra-driver-values.yaml"],
    )
    assert driver["needs"] == [f"{operator['namespace']}/{operator['name']}"]


def test_the_25_12_chart_shares_nvidia_s_repository_with_the_operator() -> None:
    data = dra_fleet("25.12.0")
    files = wrapped(data, *WRAPS)
    _, driver_app = files["delivery/argocd-application.yaml"]
    assert driver_app["spec"]["source"]["repoURL"] == NGC
    assert driver_app["spec"]["source"]["chart"] == "nvidia-dra-driver-gpu"
    repository, _, driver = files["delivery/flux-helmrelease.yaml"]  # one HelmRepository for both charts
    assert (repository["kind"], repository["metadata"]["name"], repository["spec"]["url"]) == (
        "HelmRepository",
        "nvidia",
        NGC,
    )
    assert driver["spec"]["chart"]["spec"]["sourceRef"] == {"kind": "HelmRepository", "name": "nvidia"}
    (helmfile,) = files["helmfile.yaml"]
    assert helmfile["repositories"] == [{"name": "nvidia", "url": NGC}]
    assert helmfile["releases"][1]["chart"] == "nvidia/nvidia-dra-driver-gpu"
    assert "HelmRepository nvidia (the Operator's) and HelmRelease nvidia-dra-driver-gpu" in notes_of(
        data, "delivery/flux-helmrelease.yaml", "flux"
    )


def test_a_mirrored_operator_repository_leaves_the_driver_on_nvidia_s() -> None:
    data = dra_fleet("25.12.0", delivery={"flux": {"url": "https://charts.example.com"}})
    mirror, _, source, driver = wrapped(data, "flux")["delivery/flux-helmrelease.yaml"]
    assert (mirror["metadata"]["name"], mirror["spec"]["url"]) == ("nvidia", "https://charts.example.com")
    assert (source["metadata"]["name"], source["spec"]["url"]) == ("nvidia-dra-driver-gpu", NGC)
    assert driver["spec"]["chart"]["spec"]["sourceRef"] == {"kind": "HelmRepository", "name": "nvidia-dra-driver-gpu"}


def test_the_values_file_header_installs_the_chart_as_its_release_does() -> None:
    for version, first in (("0.4.1", "helm upgrade --install"), ("25.12.0", "helm repo add nvidia " + NGC)):
        data = dra_fleet(version)
        notes = notes_of(data, "dra-driver-values.yaml")
        release = dra_release(cluster_of(data))
        commands = lines_in(cluster_of(data).kube_context, release.install_commands())
        assert commands[0].startswith(first)
        assert all(command in notes for command in commands)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda app: app["spec"]["source"]["helm"]["valuesObject"].update(nvidiaDriverRoot="/"), "dra-driver-values"),
        (lambda app: app["spec"]["source"].update(targetRevision="0.4.0"), r"pins chart version 0\.4\.0"),
    ],
)
def test_a_driver_wrapper_that_disagrees_with_its_values_is_an_internal_error(edit: Any, message: str) -> None:
    cluster = cluster_of(dra_fleet("0.4.1"))
    compiled = compile_cluster(cluster, ("argocd",))
    index = next(i for i, a in enumerate(compiled) if a.path == "delivery/argocd-application.yaml")
    operator_app, driver_app = copy.deepcopy(compiled[index].documents)
    edit(driver_app)
    compiled[index] = dataclasses.replace(compiled[index], documents=(operator_app, driver_app))
    with pytest.raises(InternalError, match=message):
        validate_artifacts(cluster, compiled)
