"""Pool taints reach every operand: the Operator's daemonsets.tolerations (values and patch), HAMi's
devicePlugin.tolerations and the DRA kubelet plugin's, each merged with its chart's default."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from gpustack_gen import load_fleet
from gpustack_gen.compile import compile_cluster
from gpustack_gen.compile.backends import backend_of
from gpustack_gen.compile.tolerations import tolerates
from gpustack_gen.model.fleet import Cluster, Taint

ROOT = Path(__file__).resolve().parents[2]
GPU = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
DEDICATED = {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}


def _example(name: str, cluster: str, taints: list[dict[str, Any]], **cluster_fields: Any) -> Cluster:
    path = ROOT / "examples" / (f"{name}/fleet.yaml" if name else "fleet.yaml")
    data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    entry = next(c for c in data["clusters"] if c["name"] == cluster)
    entry.update(cluster_fields)
    entry["nodePools"][0]["taints"] = taints
    found = load_fleet(data).cluster(cluster)
    assert found is not None
    return found


def _values(cluster: Cluster, kind: str) -> dict[str, Any]:
    documents = [a.documents[0] for a in compile_cluster(cluster) if a.kind == kind]
    if not documents:  # a release's values (HAMi's, the DRA driver's)
        documents = [r.values for r in backend_of(cluster).releases(cluster) if r.values_file.startswith(kind)]
    assert documents, kind
    return documents[0]


DEDICATED_TAINT = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]


def test_the_operator_operands_tolerate_a_dedicated_pool_beside_the_chart_default() -> None:
    prod = _example("", "prod", DEDICATED_TAINT)
    values = _values(prod, "helm-values")
    patch = _values(prod, "clusterpolicy-patch")["spec"]
    assert values["daemonsets"]["tolerations"] == patch["daemonsets"]["tolerations"] == [GPU, DEDICATED]


def test_a_taint_the_chart_default_tolerates_changes_nothing() -> None:
    prod = _example("", "prod", [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}])
    assert "daemonsets" not in _values(prod, "helm-values")


def test_hami_s_device_plugin_tolerates_the_pool_taints() -> None:
    stage = _example("hami", "stage", [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}])
    assert _values(stage, "hami")["devicePlugin"]["tolerations"] == [GPU]


@pytest.mark.parametrize(("version", "wanted"), [("25.12.0", [DEDICATED, GPU]), ("0.4.1", [GPU, DEDICATED])])
def test_the_dra_kubelet_plugin_tolerates_the_pool_taints(version: str, wanted: list[dict[str, Any]]) -> None:
    train = _example("dra", "train", DEDICATED_TAINT, dra={"version": version})
    assert _values(train, "dra-driver")["kubeletPlugin"]["tolerations"] == wanted


def test_dra_25_12_0_needs_the_gpu_toleration_that_0_4_1_has_by_default() -> None:
    gpu_taint = [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    old = _example("dra", "train", gpu_taint, dra={"version": "25.12.0"})
    new = _example("dra", "train", gpu_taint, dra={"version": "0.4.1"})
    assert _values(old, "dra-driver")["kubeletPlugin"]["tolerations"] == [GPU]
    assert "tolerations" not in _values(new, "dra-driver")["kubeletPlugin"]


@pytest.mark.parametrize(
    ("entry", "taint", "tolerated"),
    [
        (GPU, Taint("nvidia.com/gpu", None, "NoSchedule"), True),
        (GPU, Taint("nvidia.com/gpu", None, "NoExecute"), False),
        (GPU, Taint("dedicated", "gpu", "NoSchedule"), False),
        (DEDICATED, Taint("dedicated", "gpu", "NoSchedule"), True),
        (DEDICATED, Taint("dedicated", "cpu", "NoSchedule"), False),
        ({"operator": "Exists"}, Taint("anything", "x", "NoExecute"), True),
        ({"key": "dedicated", "operator": "Exists"}, Taint("dedicated", "x", "PreferNoSchedule"), True),
    ],
)
def test_tolerates_as_kubernetes_does(entry: dict[str, Any], taint: Taint, tolerated: bool) -> None:
    assert tolerates(entry, taint) is tolerated


@pytest.mark.parametrize("name", ["", "hami", "dra"])
def test_a_dedicated_pool_renders_and_validates_on_every_backend(name: str) -> None:
    from gpustack_gen import render

    path = ROOT / "examples" / (f"{name}/fleet.yaml" if name else "fleet.yaml")
    data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    for cluster in data["clusters"]:
        cluster["nodePools"][0]["taints"] = DEDICATED_TAINT
    bundle = render(load_fleet(data))
    operand_values = [f for p, f in bundle.items() if p.endswith(("-values.yaml", "clusterpolicy-patch.yaml"))]
    assert operand_values and all("key: dedicated" in f.text for f in operand_values)
