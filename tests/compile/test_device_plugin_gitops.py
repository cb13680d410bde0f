"""The GitOps wrappers of a cluster on the standalone device plugin chart deliver that chart alone: no GPU Operator
is installed there, so nothing waits for one. The upstream CRDs hold them in test_gitops.py's conformance test."""

from __future__ import annotations

from test_gitops import cluster_of, fleet, wrapped

from gpustack_gen.compile.backends.device_plugin.values import device_plugin_values
from gpustack_gen.versions.device_plugin import DEVICE_PLUGIN_REPOSITORY


def _fleet() -> dict[str, object]:
    return fleet(backend="device-plugin", devicePlugin={"version": "0.17.4"})


def test_argocd_delivers_the_chart_alone_with_its_values_inline() -> None:
    data = _fleet()
    (application,) = wrapped(data, "argocd")["delivery/argocd-application.yaml"]
    assert application["metadata"]["name"] == "nvdp-c1"
    assert application["spec"]["source"] == {
        "repoURL": DEVICE_PLUGIN_REPOSITORY,
        "chart": "nvidia-device-plugin",
        "targetRevision": "0.17.4",
        "helm": {"releaseName": "nvdp", "valuesObject": device_plugin_values(cluster_of(data))},
    }
    assert application["spec"]["destination"]["namespace"] == "nvidia-device-plugin"


def test_flux_helmrelease_depends_on_no_operator() -> None:
    source, release = wrapped(_fleet(), "flux")["delivery/flux-helmrelease.yaml"]
    assert (source["kind"], source["spec"]["url"]) == ("HelmRepository", DEVICE_PLUGIN_REPOSITORY)
    assert release["spec"]["chart"]["spec"]["chart"] == "nvidia-device-plugin"
    assert "dependsOn" not in release["spec"]


def test_helmfile_applies_the_namespace_before_its_only_release() -> None:
    (document,) = wrapped(_fleet(), "helmfile")["helmfile.yaml"]
    (release,) = document["releases"]
    assert (release["name"], release["chart"], release["values"]) == (
        "nvdp",
        "nvdp/nvidia-device-plugin",
        ["nvidia-device-plugin-values.yaml"],
    )
    assert release["hooks"][0]["args"] == ["--context", "c1", "apply", "-f", "namespace.yaml"]
    assert "needs" not in release
