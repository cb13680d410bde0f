"""HAMi's scheduler rules in the packing check (``Project-HAMi/HAMi@v2.10.0 pkg/device/nvidia/device.go:715``
``Fit``), its minimum Kubernetes, and the kube-scheduler image as a fleet setting."""

from __future__ import annotations

from typing import Any

import pytest

from gpustack_gen import FleetError, load_fleet
from gpustack_gen.compile.backends.hami.values import hami_values
from gpustack_gen.model.backends.hami import hami_options
from gpustack_gen.versions.hami import DEFAULT_SCHEDULER_IMAGE

T4 = {
    "name": "t4",
    "gpu": "tesla-t4",
    "nodes": 1,
    "nodeSelector": {"pool": "t4"},
    "sharing": {"strategy": "hami", "split": 5},
}


def fleet(*workloads: dict[str, Any], kubernetes: str = "1.30.2", **cluster: Any) -> dict[str, Any]:
    return {
        "apiVersion": "gpustack-gen/v1alpha1",
        "kind": "Fleet",
        "clusters": [
            {
                "name": "c1",
                "kubernetes": kubernetes,
                "backend": "hami",
                "operator": {"version": "v25.3.3"},
                "nodePools": [T4],
                "workloads": [{"namespace": "ml", "pool": "t4", **w} for w in workloads],
                **cluster,
            }
        ],
    }


def errors(data: dict[str, Any]) -> list[str]:
    try:
        load_fleet(data)
    except FleetError as error:
        return [p.message for p in error.problems if p.severity.value == "error"]
    return []


def warnings(data: dict[str, Any]) -> list[str]:
    return [w.message for w in load_fleet(data).warnings]


EXCLUSIVE = {"name": "solo", "gpuCores": 100, "gpuMemory": "3Gi"}
SMALL = {"name": "small", "gpuMemory": "3Gi"}


@pytest.mark.parametrize("order", [(EXCLUSIVE, SMALL), (SMALL, EXCLUSIVE)])
def test_a_100_core_pod_and_another_on_one_t4_is_refused_in_either_order(order: tuple[dict[str, Any], ...]) -> None:
    [message] = errors(fleet(*order))
    assert "HAMi places only on a GPU no other pod uses: no GPU is left for small" in message
    assert "ExclusiveDeviceAllocateConflict" in message and "CardComputeUnitsExhausted" in message


def test_with_a_second_gpu_the_two_pods_fit() -> None:
    data = fleet(EXCLUSIVE, SMALL)
    data["clusters"][0]["nodePools"] = [{**T4, "nodes": 2}]
    assert errors(data) == []
    assert not any("GPU by GPU" in w for w in warnings(data))


def test_a_pod_without_cores_is_refused_on_a_gpu_whose_cores_are_taken() -> None:
    data = fleet(
        {"name": "a", "gpuCores": 60, "gpuMemory": "3Gi"}, {"name": "b", "gpuCores": 40, "gpuMemory": "3Gi"}, SMALL
    )
    assert errors(data) == []
    assert any("not GPU by GPU: a pod of small needs 3072 MiB and 0 % of one GPU's cores" in w for w in warnings(data))


def test_pods_whose_cores_leave_room_fit() -> None:
    data = fleet({"name": "a", "gpuCores": 60, "gpuMemory": "3Gi"}, SMALL)
    assert errors(data) == [] and not any("GPU by GPU" in w for w in warnings(data))


def test_hami_needs_kubernetes_1_23() -> None:
    [message] = errors(fleet(kubernetes="1.21.14"))
    assert message.startswith("backend hami needs Kubernetes 1.23 or newer (cluster 'c1' runs 1.21.14)")
    assert errors(fleet(kubernetes="1.23.0")) == []


def test_the_scheduler_image_defaults_to_the_kubernetes_registry_and_can_be_set() -> None:
    default = load_fleet(fleet()).clusters[0]
    assert hami_options(default).scheduler_image == DEFAULT_SCHEDULER_IMAGE == "registry.k8s.io/kube-scheduler"
    assert hami_values(default)["scheduler"]["kubeScheduler"]["image"] == {
        "registry": "registry.k8s.io",
        "repository": "kube-scheduler",
    }
    mirror = load_fleet(fleet(hami={"schedulerImage": "mirror.example.com:5000/k8s/kube-scheduler"})).clusters[0]
    assert hami_values(mirror)["scheduler"]["kubeScheduler"]["image"] == {
        "registry": "mirror.example.com:5000",
        "repository": "k8s/kube-scheduler",
    }


@pytest.mark.parametrize(
    "image", ["registry.k8s.io/kube-scheduler:v1.30.2", "kube-scheduler", "Registry.io/x", "a/b\n"]
)
def test_a_scheduler_image_with_a_tag_or_without_a_registry_is_refused(image: str) -> None:
    assert errors(fleet(hami={"schedulerImage": image}))
