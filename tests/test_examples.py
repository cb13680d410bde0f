"""The bundled example and its committed output must not drift apart."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from gpustack_gen import FleetError, load_fleet, render
from gpustack_gen.model.backends.hami import hami_sharing, workload_shares

EXAMPLE = Path(__file__).resolve().parent.parent / "examples"


# Every example with committed output, found rather than listed, so that a new backend's example is checked too.
RENDERED_EXAMPLES = sorted(
    fleet.parent.relative_to(EXAMPLE).as_posix().removeprefix(".")
    for fleet in EXAMPLE.rglob("fleet.yaml")
    if "rendered" not in fleet.relative_to(EXAMPLE).parts and (fleet.parent / "rendered").is_dir()
)


def test_every_backend_example_and_the_bundled_one_have_committed_output() -> None:
    assert {"", "hami", "dra", "node-groups"} <= set(RENDERED_EXAMPLES)


@pytest.mark.parametrize("folder", RENDERED_EXAMPLES)
def test_committed_output_matches_a_fresh_render(folder: str) -> None:
    """examples/fleet.yaml -> examples/rendered, examples/<backend>/fleet.yaml -> examples/<backend>/rendered."""
    root = EXAMPLE / folder
    name = "/".join(part for part in ("examples", folder, "fleet.yaml") if part)
    bundle = render(load_fleet(root / "fleet.yaml", name=name))
    if os.environ.get("UPDATE_GOLDEN") == "1":
        bundle.write(root / "rendered")
    drift = bundle.drift(root / "rendered")
    assert drift.clean, f"{root / 'rendered'} is out of date (UPDATE_GOLDEN=1 pytest tests/test_examples.py): {drift}"
    committed = sorted(p.relative_to(root / "rendered").as_posix() for p in (root / "rendered").rglob("*.yaml"))
    assert committed == sorted(bundle.files)


def test_example_tells_the_story() -> None:
    """prod and stage: T4, CRI-O, Kubernetes 1.29.15, Operator v25.3.3, CDI on and default, 4 and 5 replicas."""
    fleet = load_fleet(EXAMPLE / "fleet.yaml")
    replicas = {}
    for name in ("prod", "stage"):
        cluster = fleet.cluster(name)
        assert cluster is not None
        assert (cluster.kubernetes, cluster.container_runtime) == ("1.29.15", "cri-o")
        assert cluster.operator.release.version == "v25.3.3"
        assert (cluster.operator.cdi_enabled, cluster.operator.cdi_default) == (True, True)
        (pool,) = cluster.pools
        assert pool.gpu.id == "tesla-t4"
        assert pool.sharing.strategy == "time-slicing"
        replicas[name] = pool.sharing.replicas
    assert replicas == {"prod": 4, "stage": 5}
    train = fleet.cluster("train")
    assert train is not None and train.mig_strategy == "mixed"
    assert {p.gpu.id: p.sharing.strategy for p in train.pools} == {"a100-40gb": "mig", "h100-80gb": "none"}
    assert all(c.workloads for c in fleet.clusters)


def test_inference_api_asks_for_one_gpu() -> None:
    text = (EXAMPLE / "rendered" / "prod" / "workloads" / "ml.inference-api.yaml").read_text()
    assert 'nvidia.com/gpu: "1"' in text


def test_the_hami_example_is_the_stage_cluster_on_hami() -> None:
    """Same nodes, Operator and runtime as stage; HAMi with 5 vGPUs per T4 and 3 GiB per inference pod."""
    stage = load_fleet(EXAMPLE / "fleet.yaml").cluster("stage")
    hami = load_fleet(EXAMPLE / "hami" / "fleet.yaml").cluster("stage")
    assert stage is not None and hami is not None
    assert (hami.kubernetes, hami.container_runtime, hami.operator) == (
        stage.kubernetes,
        stage.container_runtime,
        stage.operator,
    )
    ((before, after),) = zip(stage.pools, hami.pools, strict=True)
    assert (after.gpu, after.nodes, after.node_selector) == (before.gpu, before.nodes, before.node_selector)
    assert (hami.backend, after.sharing.strategy, hami_sharing(after.sharing).split) == ("hami", "hami", 5)
    (workload,) = hami.workloads
    assert (workload.name, workload.replicas, workload_shares(workload).gpu_memory_mib) == ("inference-api", 2, 3072)


def test_the_hami_example_renders_what_the_issue_asks() -> None:
    rendered = EXAMPLE / "hami" / "rendered" / "stage"
    yaml = YAML(typ="safe")
    values = yaml.load((rendered / "hami-values.yaml").read_text())
    assert (values["devicePlugin"]["deviceSplitCount"], values["devicePlugin"]["nvidiaNodeSelector"]) == (
        5,
        {"gpu": "on"},
    )
    assert yaml.load((rendered / "gpu-operator-values.yaml").read_text())["devicePlugin"] == {"enabled": False}
    fragment = yaml.load((rendered / "workloads" / "ml.inference-api.yaml").read_text())
    assert fragment["resources"]["limits"] == {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "3072"}
    assert not (rendered / "device-plugin-config.yaml").exists()


def test_the_dra_example_on_1_32_renders_v1beta1_and_on_1_31_is_refused() -> None:
    text = (EXAMPLE / "dra" / "fleet.yaml").read_text(encoding="utf-8")
    assert 'kubernetes: "1.34.2"' in text
    fleet = load_fleet(text.replace('kubernetes: "1.34.2"', 'kubernetes: "1.32.4"'), name="fleet.yaml")
    assert any("--runtime-config=resource.k8s.io/v1beta1=true" in w.message for w in fleet.warnings)
    bundle = render(fleet)  # kubernetes-validate for 1.32 on every object
    objects = [d for f in bundle.values() if f.kind in ("dra-device-classes", "dra-claims") for d in f.documents]
    assert {d["apiVersion"] for d in objects} == {"resource.k8s.io/v1beta1"}
    request = next(d for d in objects if d["kind"] == "ResourceClaimTemplate")["spec"]["spec"]["devices"]["requests"][0]
    assert "exactly" not in request and request["deviceClassName"].endswith(".gpustack-gen.dev")
    with pytest.raises(FleetError) as refused:
        load_fleet(text.replace('kubernetes: "1.34.2"', 'kubernetes: "1.31.9"'), name="fleet.yaml")
    (problem,) = refused.value.problems
    assert problem.path == "clusters[0].kubernetes"
    assert "backend dra needs Kubernetes 1.32 or newer" in problem.message


def test_the_node_groups_example_is_the_t4_clusters_with_karpenter_and_alerts() -> None:
    """Same T4 pools as examples/fleet.yaml's prod and stage; each with a NodePool and a PrometheusRule."""
    main = load_fleet(EXAMPLE / "fleet.yaml")
    fleet = load_fleet(EXAMPLE / "node-groups" / "fleet.yaml")
    for name in ("prod", "stage"):
        cluster, original = fleet.cluster(name), main.cluster(name)
        assert cluster is not None and original is not None
        (pool,), (before,) = cluster.pools, original.pools
        assert (pool.gpu, pool.nodes, pool.sharing) == (before.gpu, before.nodes, before.sharing)
        assert cluster.node_group_provider == "karpenter" and cluster.alerts.enabled
        rendered = EXAMPLE / "node-groups" / "rendered" / name
        assert (rendered / "node-groups" / "t4.karpenter.yaml").is_file()
        assert "GPUNodeAdvertisesNoGPUs" in (rendered / "alerts.yaml").read_text(encoding="utf-8")
