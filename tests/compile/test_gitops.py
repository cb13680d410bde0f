"""GitOps wrappers: content of each, fleet-file settings, the strict schema, the upstream CRDs, and agreement.

The upstream conformance tests convert each CRD's ``openAPIV3Schema`` (every served version) into a strict
JSON Schema at test time: Kubernetes prunes unknown fields of a structural schema silently, so any key
the CRD does not declare is an error here.
"""

from __future__ import annotations

import copy
import dataclasses
import io
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator  # type: ignore[import-untyped]
from ruamel.yaml import YAML

from gpustack_gen import FleetError, InternalError, load_fleet, render
from gpustack_gen.cli import main
from gpustack_gen.compile import compile_cluster
from gpustack_gen.compile.gitops import ignored_clusterpolicy_fields
from gpustack_gen.compile.operator import HELM_REPOSITORY, operator_settings
from gpustack_gen.model import Cluster
from gpustack_gen.validate.artifacts import validate_artifacts
from gpustack_gen.validate.gitops import check_gitops_document
from gpustack_gen.versions.gpu_operator import OPERATOR_VERSIONS

ROOT = Path(__file__).resolve().parent.parent.parent
GITOPS_EXAMPLE = ROOT / "examples" / "gitops" / "fleet.yaml"
MIRROR = "oci://registry.example.com/mirror/gpu-operator"

BASE: dict[str, Any] = {
    "apiVersion": "gpustack-gen/v1alpha1",
    "kind": "Fleet",
    "clusters": [
        {
            "name": "c1",
            "kubernetes": "1.30.2",
            "operator": {"version": "v25.3.3"},
            "nodePools": [{"name": "p1", "gpu": "tesla-t4", "nodes": 2, "nodeSelector": {"pool": "p1"}}],
        }
    ],
}


def fleet(defaults: dict[str, Any] | None = None, **cluster: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    if defaults is not None:
        data["defaults"] = defaults
    data["clusters"][0].update(cluster)
    return data


def dra_fleet(version: str, **cluster: Any) -> dict[str, Any]:
    """The base fleet on the DRA driver chart ``version``."""
    return fleet(
        backend="dra", kubernetes="1.34.2", operator={"version": "v26.7.0"}, dra={"version": version}, **cluster
    )


def cluster_of(data: dict[str, Any]) -> Cluster:
    return load_fleet(data).clusters[0]


def wrapped(data: dict[str, Any], *wrap: str) -> dict[str, tuple[dict[str, Any], ...]]:
    """path -> documents of the artifacts of the first cluster."""
    cluster = cluster_of(data)
    artifacts = compile_cluster(cluster, wrap)
    validate_artifacts(cluster, artifacts)
    return {a.path: a.documents for a in artifacts}


def notes_of(data: dict[str, Any], path: str, *wrap: str) -> str:
    cluster = cluster_of(data)
    return "\n".join(next(a.notes for a in compile_cluster(cluster, wrap) if a.path == path))


def _yaml() -> YAML:
    return YAML(typ="safe")


# --- Argo CD -------------------------------------------------------------------------------------------


def test_argocd_application_pins_the_chart_and_carries_the_values() -> None:
    data = fleet(sharing={"tesla-t4": {"strategy": "time-slicing", "replicas": 4}})
    cluster = cluster_of(data)
    (app,) = wrapped(data, "argocd")["delivery/argocd-application.yaml"]
    assert (app["apiVersion"], app["kind"]) == ("argoproj.io/v1alpha1", "Application")
    assert app["metadata"]["name"] == "gpu-operator-c1"
    assert app["metadata"]["namespace"] == "argocd"
    assert app["metadata"]["annotations"] == {"argocd.argoproj.io/sync-wave": "1"}
    source = app["spec"]["source"]
    assert source["repoURL"] == HELM_REPOSITORY == "https://helm.ngc.nvidia.com/nvidia"
    assert (source["chart"], source["targetRevision"]) == ("gpu-operator", "v25.3.3")
    assert source["helm"]["valuesObject"] == operator_settings(cluster)
    assert source["helm"]["valuesObject"]["devicePlugin"]["config"]["name"] == "gpustack-device-plugin-config"
    assert app["spec"]["destination"] == {"server": "https://kubernetes.default.svc", "namespace": "gpu-operator"}
    assert app["spec"]["project"] == "default"
    assert app["spec"]["syncPolicy"] == {"syncOptions": ["CreateNamespace=true", "ServerSideApply=true"]}


def test_argocd_settings_come_from_the_fleet_file_and_merge() -> None:
    defaults = {
        "operator": {"namespace": "nvidia-gpu"},
        "delivery": {
            "wrap": ["argocd"],
            "argocd": {
                "project": "platform",
                "namespace": "gitops",
                "syncPolicy": {"automated": {"prune": True}},
                "destination": {"server": "https://10.0.0.1:6443"},
            },
        },
    }
    cluster_delivery = {"argocd": {"destination": {"name": "c1-prod"}, "syncPolicy": {"automated": {"selfHeal": True}}}}
    (app,) = wrapped(fleet(defaults, delivery=cluster_delivery))["delivery/argocd-application.yaml"]
    assert app["metadata"]["namespace"] == "gitops"
    assert app["spec"]["project"] == "platform"
    # destination is replaced as a whole: name alone, not name and the fleet's server
    assert app["spec"]["destination"] == {"name": "c1-prod", "namespace": "nvidia-gpu"}
    assert app["spec"]["syncPolicy"]["automated"] == {"prune": True, "selfHeal": True}


def test_a_cluster_can_turn_off_the_fleets_automated_sync() -> None:
    defaults = {"delivery": {"argocd": {"syncPolicy": {"automated": {"selfHeal": True}}}}}
    data = fleet(defaults, delivery={"argocd": {"syncPolicy": {"automated": {"enabled": False}}}})
    (app,) = wrapped(data, "argocd")["delivery/argocd-application.yaml"]
    assert "automated" not in app["spec"]["syncPolicy"]
    assert "Sync is manual" in notes_of(data, "delivery/argocd-application.yaml", "argocd")


def test_argocd_destination_takes_server_or_name_not_both() -> None:
    data = fleet(delivery={"argocd": {"destination": {"server": "https://x:6443", "name": "x"}}})
    with pytest.raises(FleetError) as caught:
        load_fleet(data)
    assert "server or name, not both" in str(caught.value.problems[0].message)


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("v24.3.0", []),
        ("v24.9.2", ["/spec/migManager/config/name"]),
        ("v25.3.3", ["/spec/operator/defaultRuntime", "/spec/migManager/config/name"]),
        ("v25.10.1", ["/spec/cdi/default", "/spec/operator/defaultRuntime", "/spec/migManager/config/name"]),
        ("v26.7.0", ["/spec/cdi/default", "/spec/cdi/nriPluginEnabled", "/spec/hostPaths/kubeletRootDir"]),
    ],
)
def test_ignore_differences_follow_the_chart_version(version: str, expected: list[str]) -> None:
    data = fleet(operator={"version": version})
    (app,) = wrapped(data, "argocd")["delivery/argocd-application.yaml"]
    pointers = [p for entry in app["spec"].get("ignoreDifferences", []) for p in entry["jsonPointers"]]
    assert pointers == expected
    notes = notes_of(data, "delivery/argocd-application.yaml", "argocd")
    for pointer in expected:
        assert f"- {pointer}: " in notes  # each one says why it is there
    if not expected:
        assert "ignoreDifferences" not in app["spec"]
        assert "No ClusterPolicy field needs ignoreDifferences" in notes


def test_a_field_the_values_set_is_never_ignored() -> None:
    """With a custom MIG layout the values name the mig-parted ConfigMap: its name is not ignored."""
    pool = {
        "name": "p1",
        "gpu": "a100-40gb",
        "nodes": 1,
        "nodeSelector": {"pool": "p1"},
        "sharing": {"strategy": "mig", "layout": {"3g.20gb": 2}},
    }
    cluster = cluster_of(fleet(nodePools=[pool]))
    settings_ = operator_settings(cluster)
    assert settings_["migManager"]["config"]["name"] == "gpustack-mig-parted-config"
    pointers = [p for p, _ in ignored_clusterpolicy_fields(cluster)]
    assert pointers == ["/spec/operator/defaultRuntime"]


def test_nri_plugin_field_is_ignored_only_when_the_chart_does_not_render_it() -> None:
    on = cluster_of(fleet(operator={"version": "v26.7.0", "cdi": {"enabled": True, "nriPluginEnabled": True}}))
    assert "/spec/cdi/nriPluginEnabled" not in [p for p, _ in ignored_clusterpolicy_fields(on)]


# --- Flux ----------------------------------------------------------------------------------------------


def test_flux_helmrepository_and_helmrelease() -> None:
    data = fleet(operator={"version": "v26.7.0", "namespace": "nvidia-gpu"})
    cluster = cluster_of(data)
    repository, release = wrapped(data, "flux")["delivery/flux-helmrelease.yaml"]
    assert (repository["apiVersion"], repository["kind"]) == ("source.toolkit.fluxcd.io/v1", "HelmRepository")
    assert repository["metadata"]["namespace"] == "flux-system"
    assert repository["spec"] == {"interval": "1h", "url": "https://helm.ngc.nvidia.com/nvidia"}
    assert (release["apiVersion"], release["kind"]) == ("helm.toolkit.fluxcd.io/v2", "HelmRelease")
    spec = release["spec"]
    assert spec["chart"]["spec"] == {
        "chart": "gpu-operator",
        "version": "v26.7.0",
        "sourceRef": {"kind": "HelmRepository", "name": repository["metadata"]["name"]},
    }
    assert spec["releaseName"] == "gpu-operator"
    assert spec["targetNamespace"] == spec["storageNamespace"] == "nvidia-gpu"
    assert spec["install"] == {"createNamespace": True, "crds": "CreateReplace", "remediation": {"retries": 3}}
    assert spec["upgrade"] == {"crds": "CreateReplace", "remediation": {"retries": 3}}
    assert spec["values"] == operator_settings(cluster)


def test_flux_settings_come_from_the_fleet_file() -> None:
    delivery = {"flux": {"namespace": "flux", "interval": "30m", "releaseName": "nvidia-gpu-operator"}}
    repository, release = wrapped(fleet(delivery=delivery), "flux")["delivery/flux-helmrelease.yaml"]
    assert repository["metadata"]["namespace"] == release["metadata"]["namespace"] == "flux"
    assert repository["spec"]["interval"] == release["spec"]["interval"] == "30m"
    assert release["spec"]["releaseName"] == "nvidia-gpu-operator"


def test_oci_source_without_a_url_is_refused() -> None:
    with pytest.raises(FleetError) as caught:
        load_fleet(fleet(delivery={"flux": {"source": "oci"}}))
    (problem,) = caught.value.problems
    assert "no OCI location" in problem.message
    assert "flux.url" in problem.hint


@pytest.mark.parametrize(
    ("flux", "message"),
    [
        ({"source": "oci", "url": "https://example.com/charts"}, "needs an oci:// URL"),
        ({"url": MIRROR}, "needs source: oci"),
        ({"interval": "1 hour"}, "interval"),
    ],
)
def test_bad_flux_settings_are_refused(flux: dict[str, Any], message: str) -> None:
    with pytest.raises(FleetError) as caught:
        load_fleet(fleet(delivery={"flux": flux}))
    assert message in str(caught.value)


def test_oci_source_points_at_the_mirror_and_says_so() -> None:
    data = fleet(delivery={"flux": {"source": "oci", "url": MIRROR}})
    source, release = wrapped(data, "flux")["delivery/flux-helmrelease.yaml"]
    assert source["kind"] == "OCIRepository"
    assert source["spec"]["url"] == MIRROR
    assert source["spec"]["ref"] == {"tag": "v25.3.3"}
    assert source["spec"]["layerSelector"]["operation"] == "copy"
    assert release["spec"]["chartRef"] == {"kind": "OCIRepository", "name": source["metadata"]["name"]}
    assert "chart" not in release["spec"]
    assert "NVIDIA documents no OCI location" in notes_of(data, "delivery/flux-helmrelease.yaml", "flux")


# --- helmfile, Namespace, kustomization ----------------------------------------------------------------


def test_helmfile_pins_the_release_and_applies_the_configmaps_first() -> None:
    data = fleet(sharing={"tesla-t4": {"strategy": "time-slicing", "replicas": 2}})
    (document,) = wrapped(data, "helmfile")["helmfile.yaml"]
    assert document["repositories"] == [{"name": "nvidia", "url": "https://helm.ngc.nvidia.com/nvidia"}]
    (release,) = document["releases"]
    assert (release["chart"], release["version"], release["namespace"]) == (
        "nvidia/gpu-operator",
        "v25.3.3",
        "gpu-operator",
    )
    assert release["values"] == ["gpu-operator-values.yaml"]
    (hook,) = release["hooks"]
    assert hook["events"] == ["presync"]
    context = document["helmDefaults"]["kubeContext"]  # helm and the hook reach the cluster's context
    assert context
    assert hook["args"] == ["--context", context, "apply", "-f", "namespace.yaml", "-f", "device-plugin-config.yaml"]


def test_wrappers_have_a_kustomization_of_their_own_beside_the_namespace_and_configmaps() -> None:
    data = fleet(sharing={"tesla-t4": {"strategy": "time-slicing", "replicas": 2}})
    files = wrapped(data, "argocd", "helmfile")
    (kustomization,) = files["kustomization.yaml"]
    assert kustomization["resources"] == ["namespace.yaml", "device-plugin-config.yaml"]
    (delivery,) = files["delivery/kustomization.yaml"]
    assert delivery["resources"] == ["argocd-application.yaml"]
    (namespace,) = files["namespace.yaml"]
    assert namespace["metadata"]["name"] == "gpu-operator"
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    assert namespace["metadata"]["annotations"] == {"argocd.argoproj.io/sync-options": "Prune=false"}
    # the ConfigMap carries no wave: it is the Application (wave 1) that waits
    (configmap,) = files["device-plugin-config.yaml"]
    assert "annotations" not in configmap["metadata"]


def test_without_wrap_there_are_no_wrappers() -> None:
    files = wrapped(fleet())
    assert not {"delivery/argocd-application.yaml", "delivery/flux-helmrelease.yaml", "helmfile.yaml"} & set(files)
    (kustomization,) = files["kustomization.yaml"]
    assert kustomization["resources"] == ["namespace.yaml", "device-plugin-config.yaml"]
    (namespace,) = files["namespace.yaml"]
    assert "annotations" not in namespace["metadata"]  # no GitOps tool to tell about pruning


def test_fleet_wrap_and_render_wrap_add_up() -> None:
    data = fleet(delivery={"wrap": ["helmfile"]})
    bundle = render(load_fleet(data), wrap=["flux"])
    assert {"c1/helmfile.yaml", "c1/delivery/flux-helmrelease.yaml"} <= set(bundle.files)
    assert "c1/delivery/argocd-application.yaml" not in bundle.files


def test_both_argocd_and_flux_is_a_warning() -> None:
    loaded = load_fleet(fleet(delivery={"wrap": ["flux", "argocd"]}))
    assert loaded.clusters[0].delivery.wrap == ("argocd", "flux")
    assert any("both Argo CD and Flux" in w.message for w in loaded.warnings)


def _fleet_file(tmp_path: Path, **settings: Any) -> Path:
    fleet_file = tmp_path / "fleet.yaml"
    buffer = io.StringIO()
    _yaml().dump(fleet(**settings), buffer)
    fleet_file.write_text(buffer.getvalue(), encoding="utf-8")
    return fleet_file


def test_render_wrap_on_the_command_line(tmp_path: Path) -> None:
    fleet_file = _fleet_file(tmp_path)
    runner = CliRunner()
    out = tmp_path / "out"
    result = runner.invoke(
        main, ["render", str(fleet_file), "--out", str(out), "--wrap", "argocd", "--wrap", "helmfile"]
    )
    assert result.exit_code == 0, result.output
    assert (out / "c1" / "delivery/argocd-application.yaml").is_file()
    assert (out / "c1" / "helmfile.yaml").is_file()
    assert not (out / "c1" / "delivery/flux-helmrelease.yaml").exists()
    bad = runner.invoke(main, ["render", str(fleet_file), "--out", str(out), "--wrap", "spinnaker"])
    assert bad.exit_code == 2


@pytest.mark.parametrize(
    ("delivery", "wrap", "named"),
    [(None, ["argocd", "flux"], "--wrap argocd --wrap flux"), ({"wrap": ["flux"]}, ["argocd"], "--wrap argocd")],
    ids=["both-on-the-command-line", "one-over-the-fleet-file"],
)
def test_render_wrap_for_argocd_and_flux_both_is_refused(
    tmp_path: Path, delivery: dict[str, Any] | None, wrap: list[str], named: str
) -> None:
    """The README: wrap a cluster for Argo CD or for Flux, not both (the kustomization would list both)."""
    fleet_file = _fleet_file(tmp_path, **({"delivery": delivery} if delivery else {}))
    out = tmp_path / "out"
    args = ["render", str(fleet_file), "--out", str(out)] + [f"--wrap={target}" for target in wrap]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert f"Error: {named} would wrap cluster 'c1' for both Argo CD and Flux" in result.stderr
    assert not out.exists()


# --- the strict schema and the agreement check -----------------------------------------------------------


def test_strict_schema_refuses_what_gpustack_gen_does_not_write() -> None:
    (app,) = wrapped(fleet(), "argocd")["delivery/argocd-application.yaml"]
    assert check_gitops_document(app) == []
    loose = copy.deepcopy(app)
    loose["spec"]["source"]["targetRevision"] = "25.x"
    loose["spec"]["syncPolicy"]["retry"] = {"limit": 2}
    paths = {finding.path for finding in check_gitops_document(loose)}
    assert paths == {"spec.source.targetRevision", "spec.syncPolicy.retry"}


def test_a_wrapper_that_disagrees_with_the_values_is_an_internal_error() -> None:
    cluster = cluster_of(fleet())
    artifacts = compile_cluster(cluster, ("argocd", "flux"))
    index = next(i for i, a in enumerate(artifacts) if a.path == "delivery/flux-helmrelease.yaml")
    source, release = copy.deepcopy(artifacts[index].documents)
    release["spec"]["values"]["mig"]["strategy"] = "mixed"
    artifacts[index] = dataclasses.replace(artifacts[index], documents=(source, release))
    with pytest.raises(InternalError, match="other values"):
        validate_artifacts(cluster, artifacts)
    artifacts = compile_cluster(cluster, ("argocd",))
    app_index = next(i for i, a in enumerate(artifacts) if a.path == "delivery/argocd-application.yaml")
    (app,) = copy.deepcopy(artifacts[app_index].documents)
    app["spec"]["source"]["targetRevision"] = "v25.3.0"
    artifacts[app_index] = dataclasses.replace(artifacts[app_index], documents=(app,))
    with pytest.raises(InternalError, match=r"pins chart version v25\.3\.0"):
        validate_artifacts(cluster, artifacts)


# --- conformance with the upstream CRDs --------------------------------------------------------------------


def strict_json_schema(node: Any) -> Any:
    """A Kubernetes structural schema as a strict Draft 7 schema: undeclared keys are errors."""
    if isinstance(node, list):
        return [strict_json_schema(item) for item in node]
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key.startswith("x-kubernetes-") or key == "nullable":
            continue
        if key in ("properties", "patternProperties", "definitions"):
            out[key] = {name: strict_json_schema(sub) for name, sub in value.items()}
        else:
            out[key] = strict_json_schema(value)
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    if (
        node.get("type") == "object"
        and "properties" in node
        and not node.get("x-kubernetes-preserve-unknown-fields")
        and "additionalProperties" not in node
    ):
        out["additionalProperties"] = False
    return out


@pytest.fixture(scope="module")
def served_schemas(upstream: Path) -> dict[tuple[str, str], Draft7Validator]:
    """(apiVersion, kind) -> validator, for every served version of every GitOps CRD upstream ships."""
    validators: dict[tuple[str, str], Draft7Validator] = {}
    folder = upstream / "gitops"
    for path in sorted(folder.glob("*.yaml")):
        crd = _yaml().load(path.read_text(encoding="utf-8"))
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            if version.get("served"):
                schema = strict_json_schema(version["schema"]["openAPIV3Schema"])
                validators[(f"{group}/{version['name']}", kind)] = Draft7Validator(schema)
    assert {kind for _, kind in validators} == {"Application", "HelmRelease", "HelmRepository", "OCIRepository"}
    return validators


def _conformance_fleets() -> Iterator[tuple[str, dict[str, Any]]]:
    yield "gitops-example", _yaml().load(GITOPS_EXAMPLE.read_text(encoding="utf-8"))
    yield "oci", fleet(delivery={"wrap": ["flux"], "flux": {"source": "oci", "url": MIRROR}})
    yield (
        "argocd-by-name",
        fleet(
            operator={"version": "v26.7.0"},
            delivery={
                "wrap": ["argocd"],
                "argocd": {"destination": {"name": "c1"}, "syncPolicy": {"automated": {"prune": True}}},
            },
        ),
    )
    yield "hami", fleet(backend="hami", operator={"version": "v26.7.0"}, delivery={"wrap": ["argocd", "flux"]})
    yield "device-plugin", fleet(backend="device-plugin", delivery={"wrap": ["argocd", "flux"]})
    for version in ("0.4.1", "25.12.0"):  # the DRA driver's chart by OCI, and from NVIDIA's repository
        yield f"dra-{version}", dra_fleet(version, delivery={"wrap": ["argocd", "flux"]})
    yield "dra-mirror", dra_fleet("25.12.0", delivery={"wrap": ["flux"], "flux": {"url": "https://charts.example.com"}})
    for release in OPERATOR_VERSIONS:
        yield (
            f"all-{release.version}",
            fleet(operator={"version": release.version}, delivery={"wrap": ["argocd", "flux"]}),
        )


def _wrapper_documents() -> Iterator[tuple[str, dict[str, Any]]]:
    for label, data in _conformance_fleets():
        for rendered in render(load_fleet(data)).values():
            if rendered.kind in ("argocd-application", "flux-helmrelease"):
                for document in _yaml().load_all(rendered.text):  # the written text, not the data
                    yield f"{label}:{rendered.path}", document


def test_wrappers_conform_to_the_upstream_crds(served_schemas: dict[tuple[str, str], Draft7Validator]) -> None:
    checked: set[str] = set()
    for where, document in _wrapper_documents():
        key = (document["apiVersion"], document["kind"])
        assert key in served_schemas, f"{where}: {key} is not a served version upstream"
        errors = sorted(served_schemas[key].iter_errors(document), key=lambda e: list(e.path))
        assert not errors, f"{where}: {[f'{list(e.path)}: {e.message}' for e in errors[:3]]}"
        if document["kind"] == "HelmRelease":  # the CRD's CEL rule
            assert ("chart" in document["spec"]) != ("chartRef" in document["spec"]), where
        checked.add(document["kind"])
    assert checked == {"Application", "HelmRelease", "HelmRepository", "OCIRepository"}


def test_the_converted_schemas_do_reject_unknown_fields(
    served_schemas: dict[tuple[str, str], Draft7Validator],
) -> None:
    """Without this, a permissive conversion would let the conformance test pass on anything."""
    _, document = next(d for d in _wrapper_documents() if d[1]["kind"] == "HelmRelease")
    document["spec"]["install"]["crd"] = "CreateReplace"  # a typo of install.crds
    assert not served_schemas[("helm.toolkit.fluxcd.io/v2", "HelmRelease")].is_valid(document)


def _crd_node(crd: Mapping[str, Any], pointer: str) -> Mapping[str, Any] | None:
    node: Any = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    for part in pointer.strip("/").split("/"):
        node = (node.get("properties") or {}).get(part)
        if node is None:
            return None
    return node  # type: ignore[no-any-return]


def test_ignored_fields_are_crd_defaults_the_chart_leaves_out(upstream: Path) -> None:
    """Every ignoreDifferences pointer has a CRD default at that version, and the chart values leave it empty."""
    checked = 0
    for release in OPERATOR_VERSIONS:
        folder = upstream / "gpu-operator" / release.version
        if not folder.is_dir():
            continue
        crd = _yaml().load((folder / "nvidia.com_clusterpolicies.yaml").read_text(encoding="utf-8"))
        values = _yaml().load((folder / "values.yaml").read_text(encoding="utf-8"))
        cluster = cluster_of(fleet(operator={"version": release.version}))
        for pointer, _ in ignored_clusterpolicy_fields(cluster):
            node = _crd_node(crd, pointer)
            assert node is not None and "default" in node, f"{release.version}: {pointer} has no CRD default"
            value: Any = values
            for part in pointer.split("/")[2:]:
                value = value.get(part) if isinstance(value, dict) else None
            assert not value, f"{release.version}: the chart values set {pointer} = {value!r}"
            checked += 1
    assert checked >= 5


# --- property: wrappers and values never disagree -----------------------------------------------------------

_POOLS = {
    "tesla-t4": st.sampled_from(
        [
            {"strategy": "none"},
            {"strategy": "time-slicing", "replicas": 4},
            {"strategy": "time-slicing", "replicas": 2, "renameByDefault": True},
        ]
    ),
    "a100-40gb": st.sampled_from([{"strategy": "none"}, {"strategy": "mig", "layout": {"3g.20gb": 2}}]),
    "h100-80gb": st.sampled_from([{"strategy": "none"}, {"strategy": "mig", "config": "all-balanced"}]),
}


@st.composite
def small_fleets(draw: st.DrawFn) -> dict[str, Any]:
    clusters = []
    for index in range(draw(st.integers(1, 2))):
        gpus = draw(st.lists(st.sampled_from(sorted(_POOLS)), min_size=1, max_size=2, unique=True))
        pools = [
            {"name": f"p{i}", "gpu": gpu, "nodes": 1, "nodeSelector": {"pool": f"p{i}"}, "sharing": draw(_POOLS[gpu])}
            for i, gpu in enumerate(gpus)
        ]
        cluster: dict[str, Any] = {
            "name": f"c{index}",
            "kubernetes": "1.30.2",
            "operator": {"version": draw(st.sampled_from([v.version for v in OPERATOR_VERSIONS]))},
            "mig": {"strategy": "mixed"},
            "nodePools": pools,
        }
        if draw(st.booleans()):
            cluster["operator"]["namespace"] = draw(st.sampled_from(["gpu-operator", "nvidia"]))
        if draw(st.booleans()):
            cluster["delivery"] = {"flux": {"source": "oci", "url": MIRROR}}
        clusters.append(cluster)
    return {"apiVersion": "gpustack-gen/v1alpha1", "kind": "Fleet", "clusters": clusters}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_fleets(), st.lists(st.sampled_from(["argocd", "flux", "helmfile"]), min_size=1, unique=True))
def test_wrappers_and_values_never_disagree(data: dict[str, Any], wrap: list[str]) -> None:
    try:
        loaded = load_fleet(data)
    except FleetError:
        assume(False)
        raise
    bundle = render(loaded, wrap=wrap)
    yaml = _yaml()
    for cluster in loaded.clusters:
        version = cluster.operator.release.version
        values = yaml.load(bundle.files[f"{cluster.name}/gpu-operator-values.yaml"].text)
        pinned: list[str] = []
        carried: list[Any] = []
        for rendered in bundle.values():
            if not rendered.path.startswith(f"{cluster.name}/"):
                continue
            for document in yaml.load_all(rendered.text):
                kind = document.get("kind") if isinstance(document, dict) else None
                if kind == "Application":
                    pinned.append(document["spec"]["source"]["targetRevision"])
                    carried.append(document["spec"]["source"]["helm"]["valuesObject"])
                elif kind == "HelmRelease":
                    if "chart" in document["spec"]:
                        pinned.append(document["spec"]["chart"]["spec"]["version"])
                    carried.append(document["spec"]["values"])
                elif kind == "OCIRepository":
                    pinned.append(document["spec"]["ref"]["tag"])
                elif rendered.kind == "helmfile":
                    (release,) = document["releases"]
                    pinned.append(release["version"])
                    assert release["values"] == ["gpu-operator-values.yaml"]
        assert len(pinned) == len(wrap), (cluster.name, wrap, pinned)
        assert set(pinned) == {version}
        assert all(c == values for c in carried)
        assert version in bundle.files[f"{cluster.name}/gpu-operator-values.yaml"].text  # the header names it


def test_an_unknown_wrapper_is_a_fleet_error_not_a_crash() -> None:
    from gpustack_gen import FleetError

    loaded = load_fleet(fleet())
    with pytest.raises(FleetError, match="unknown wrapper 'argo'"):
        render(loaded, wrap=["argo"])
    assert set(render(loaded, wrap="flux").files) >= {"c1/delivery/flux-helmrelease.yaml"}  # a string is one name


def test_every_artifact_kind_is_the_one_its_file_name_says() -> None:
    """Readers of a rendered folder (diff) take kinds from FILE_KINDS: the compilers must agree with it."""
    from gpustack_gen.compile import compile_cluster
    from gpustack_gen.compile.artifact import kind_of_file

    data = fleet(sharing={"tesla-t4": {"strategy": "time-slicing", "replicas": 2}})
    for cluster in load_fleet(data).clusters:
        for artifact in compile_cluster(cluster, ("argocd", "flux", "helmfile")):
            assert kind_of_file(artifact.path) == artifact.kind, artifact.path
