"""Reading cluster objects: JSON and YAML alike, Lists opened once, items located, readers chosen by (apiVersion, kind)."""

from __future__ import annotations

import json

import pytest

from gpustack_gen.errors import Problem
from gpustack_gen.k8s_state import (
    READERS,
    ConfigMap,
    Deployment,
    Device,
    DraObject,
    Node,
    Pod,
    ResourceSlice,
    describe,
    parse_documents,
    read_objects,
)


def wrong(data: object, line: int, path: str) -> Problem:
    return Problem("in.json", line, 1, path, f"{describe(data)}, not wanted")


def read(text: str, kinds: tuple[str, ...]) -> tuple[list[object], list[Problem]]:
    problems: list[Problem] = []
    docs = parse_documents("in.json", text, problems)
    return list(read_objects("in.json", docs, kinds, wrong, problems)), problems


NODE = {"metadata": {"name": "n1", "labels": {"a": "b"}}, "status": {"allocatable": {"nvidia.com/gpu": "4"}}}


def test_an_api_list_and_a_kubectl_list_give_the_same_objects() -> None:
    api = json.dumps({"apiVersion": "v1", "kind": "NodeList", "items": [NODE, NODE]}, indent=2)
    kubectl = json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Node", **NODE}] * 2}, indent=2
    )
    from_api, problems = read(api, ("Node",))
    from_kubectl, more = read(kubectl, ("Node",))
    assert problems == more == []
    assert [(o.name, o.allocatable, o.where.line) for o in from_api if isinstance(o, Node)] == [
        ("n1", {"nvidia.com/gpu": "4"}, 5),
        ("n1", {"nvidia.com/gpu": "4"}, 18),
    ]
    assert [(o.name, o.where.line) for o in from_kubectl if isinstance(o, Node)] == [("n1", 5), ("n1", 20)]


def test_json_item_lines_skip_strings_that_look_like_structure() -> None:
    tricky = {"apiVersion": "v1", "kind": "List", "note": 'a "quoted" ], { string\n', "items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "[{\n"}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}},
    ]}  # fmt: skip
    text = json.dumps(tricky, indent=1)
    objects, problems = read(text, ("ConfigMap",))
    assert [o.name for o in objects if isinstance(o, ConfigMap)] == ["a"]
    brace = next(n for n, line in enumerate(text.splitlines(), 1) if '"kind": "Secret"' in line) - 2  # its "{"
    assert text.splitlines()[brace - 1].strip() == "{"
    assert [(p.line, p.path, p.message) for p in problems] == [(brace, "items[1]", "a Secret (s), not wanted")]


def test_a_mixed_list_gives_each_kind_its_reader() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "ownerReferences": [{"controller": True, "name": "ds"}]},
           "spec": {"nodeName": "n1"}, "status": {"phase": "Running", "containerStatuses": [
               {"name": "c", "ready": False, "restartCount": 3, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}}}]}}  # fmt: skip
    daemonset = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds", "generation": 2},
                 "status": {"desiredNumberScheduled": 3, "numberReady": 2, "updatedNumberScheduled": 3, "observedGeneration": 1}}  # fmt: skip
    objects, problems = read(
        json.dumps({"apiVersion": "v1", "kind": "List", "items": [daemonset, pod]}), ("DaemonSet", "Pod")
    )
    assert problems == []
    ds, found = objects
    assert (ds.desired, ds.ready, ds.updated, ds.current_generation) == (3, 2, 3, False)  # type: ignore[union-attr]
    assert isinstance(found, Pod) and (found.owner, found.node_name, found.ready) == ("ds", "n1", False)
    (container,) = found.containers
    assert (container.waiting, container.last_exit, container.restarts) == (
        "CrashLoopBackOff",
        "exit code 1 (Error)",
        3,
    )


def test_a_deployment_counts_its_replicas_and_a_node_keeps_its_annotations() -> None:
    deployments = [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "s", "generation": 2},
         "spec": {"replicas": 2}, "status": {"readyReplicas": 1, "updatedReplicas": 2, "observedGeneration": 2}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "t"}, "spec": {}, "status": {}},
    ]  # fmt: skip
    node = {**NODE, "metadata": {**NODE["metadata"], "annotations": {"hami.io/node-handshake": "Requesting_x"}}}
    objects, problems = read(
        json.dumps({"apiVersion": "v1", "kind": "List", "items": [*deployments, {"kind": "Node", **node}]}),
        ("Deployment", "Node"),
    )
    assert problems == []
    first, unset, found = objects
    assert isinstance(first, Deployment) and isinstance(unset, Deployment) and isinstance(found, Node)
    assert (first.desired, first.ready, first.updated, first.current_generation) == (2, 1, 2, True)
    assert (unset.desired, unset.ready) == (1, 0)  # spec.replicas defaults to 1
    assert found.annotations == {"hami.io/node-handshake": "Requesting_x"}


def _slice(api_version: str, device: dict[str, object]) -> dict[str, object]:
    spec = {"driver": "gpu.nvidia.com", "nodeName": "n1", "pool": {"name": "n1", "generation": 3}, "devices": [device]}
    return {"apiVersion": api_version, "kind": "ResourceSlice", "metadata": {"name": "n1-gpu"}, "spec": spec}


def test_a_slice_s_devices_read_alike_in_every_version() -> None:
    """v1beta1 nests a device's attributes, capacity and taints under ``basic``; each attribute is one of string,
    version, int or bool; the driver's own domain is left out of an attribute's name."""
    body = {
        "attributes": {
            "type": {"string": "gpu"},
            "gpu.nvidia.com/productName": {"string": "NVIDIA H100 80GB HBM3"},
            "driverVersion": {"version": "595.91.7"},
            "index": {"int": 0},
            "healthy": {"bool": False},
            "resource.kubernetes.io/pcieRoot": {"string": "pci0000:10"},
        },
        "capacity": {"memory": {"value": "80Gi"}},
        "taints": [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoExecute"}, {"key": "k", "effect": "x"}],
    }
    slices = [_slice("resource.k8s.io/v1beta1", {"name": "gpu-0", "basic": body})]
    slices += [_slice(f"resource.k8s.io/{version}", {"name": "gpu-0", **body}) for version in ("v1beta2", "v1")]
    objects, problems = read(json.dumps({"apiVersion": "v1", "kind": "List", "items": slices}), ("ResourceSlice",))
    assert problems == []
    device = Device(
        "gpu-0",
        {
            "type": "gpu",
            "productName": "NVIDIA H100 80GB HBM3",
            "driverVersion": "595.91.7",
            "index": "0",
            "healthy": "false",
            "resource.kubernetes.io/pcieRoot": "pci0000:10",
        },
        {"memory": "80Gi"},
        ("gpu.nvidia.com/xid=79:NoExecute", "k:x"),
    )
    assert [(o.node_name, o.pool, o.generation, o.slice_count, o.devices) for o in objects] == [
        ("n1", "n1", 3, 1, (device,))
    ] * 3
    assert all(isinstance(o, ResourceSlice) for o in objects)


def test_a_claim_counts_the_pods_it_is_reserved_for_and_the_pools_of_its_devices() -> None:
    results = [{"pool": "n2", "device": "gpu-1"}, {"pool": "n1", "device": "gpu-0"}, {"pool": "n1", "device": "gpu-3"}]
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ml", "labels": {"a": "b"}},
        "spec": {"devices": {"requests": []}},
        "status": {"allocation": {"devices": {"results": results}}, "reservedFor": [{"name": "p1"}, {"name": "p2"}]},
    }
    (found,), problems = read(json.dumps(claim), ("ResourceClaim",))
    assert problems == []
    assert isinstance(found, DraObject)
    assert (found.kind, found.namespace, found.labels, found.reserved_for, found.allocated_on) == (
        "ResourceClaim", "ml", {"a": "b"}, 2, ("n1", "n2")
    )  # fmt: skip


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"kind": "Node", "apiVersion": "v2", "metadata": {"name": "x"}}',
            "a Node of apiVersion v2; gpustack-gen reads v1",
        ),
        (
            '{"kind": "ResourceSlice", "apiVersion": "resource.k8s.io/v1alpha3", "metadata": {"name": "x"}}',
            "a ResourceSlice of apiVersion resource.k8s.io/v1alpha3; gpustack-gen reads resource.k8s.io/v1beta1 or "
            "resource.k8s.io/v1beta2 or resource.k8s.io/v1",
        ),
        (
            '{"kind": "ResourceSlice", "apiVersion": "resource.k8s.io/v1", "metadata": {"name": "x"}, "spec": {}}',
            "a ResourceSlice without metadata.name, spec.driver or spec.pool.name",
        ),
        (
            json.dumps(_slice("resource.k8s.io/v1", {"attributes": {}})),
            "ResourceSlice n1-gpu: a device without a name",
        ),
        (
            '{"kind": "DeviceClass", "apiVersion": "resource.k8s.io/v1", "metadata": {"name": "x"}}',
            "a DeviceClass without metadata.name or spec",
        ),
        ('{"kind": "DaemonSet", "apiVersion": "apps/v1", "metadata": {}}', "a DaemonSet without metadata.name"),
        ('{"kind": "Deployment", "apiVersion": "apps/v1", "metadata": {}}', "a Deployment without metadata.name"),
        ('{"kind": "Node"', "invalid JSON: Expecting ',' delimiter"),
        ("kind: Node\nmetadata: [", "invalid YAML"),
    ],
)
def test_refusals_are_located(text: str, message: str) -> None:
    objects, problems = read(text, ("Node", "ResourceSlice", "DeviceClass", "DaemonSet", "Deployment"))
    assert objects == []
    assert [p.message.startswith(message) for p in problems] == [True]
    assert problems[0].line > 0


def test_every_reader_is_keyed_by_its_api_version_and_kind() -> None:
    resource = [
        (f"resource.k8s.io/{version}", kind)
        for version in ("v1", "v1beta1", "v1beta2")
        for kind in ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice")
    ]
    assert sorted(READERS) == [
        ("apps/v1", "DaemonSet"),
        ("apps/v1", "Deployment"),
        ("nvidia.com/v1", "ClusterPolicy"),
        *resource,
        ("v1", "ConfigMap"),
        ("v1", "Event"),
        ("v1", "Node"),
        ("v1", "Pod"),
    ]
