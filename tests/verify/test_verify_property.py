"""A cluster built to match a fleet passes verify, whatever the fleet: no check reports a healthy cluster.

The cluster is what the upstream components would show once a render is rolled out: each pool's nodes
carry its selector and labels, advertise what the model says, and GFD's labels (product with ``-SHARED``
when shared and not renamed, ``-MIG-<profile>`` under single; ``nvidia.com/mig-<profile>.count`` under
mixed); the ClusterPolicy holds the patch, the ConfigMaps the render, the DaemonSets are rolled out. On
HAMi each node also registers its GPUs in ``hami.io/node-nvidia-register`` as HAMi's device plugin writes
it (the split, the memory the model gives, 100 cores, healthy), and HAMi's workloads are rolled out. On DRA each
node publishes its devices in a ResourceSlice as the driver's kubelet plugin does (its MIG devices, or its GPUs
whole) in the cluster's ``resource.k8s.io`` version, and the cluster holds the rendered DeviceClasses and claims.
"""

from __future__ import annotations

import json
from typing import Any

from dra_fleets import dra_fleets
from dra_helpers import node_devices, node_slice
from hami_fleets import hami_fleets
from hypothesis import HealthCheck, assume, given, settings
from test_properties import fleets

from gpustack_gen import FleetError, load_fleet
from gpustack_gen.compile.artifact import MIG_CONFIG_LABEL, MIG_CONFIG_STATE_LABEL
from gpustack_gen.compile.backends import backend_of
from gpustack_gen.k8s_state import READERS, ClusterPolicy, ConfigMap, DaemonSet, Deployment, Node, Where
from gpustack_gen.k8s_state.objects import DRA_KINDS
from gpustack_gen.model.backends.dra import resource_api_version
from gpustack_gen.model.fleet import Cluster, Pool
from gpustack_gen.verify import ClusterState, verify_cluster
from gpustack_gen.verify.backends import verify_backend
from gpustack_gen.verify.expected import expected_state
from gpustack_gen.yamlio.writer import dump_yaml

HERE = Where("model", 0)


def _gfd_labels(pool: Pool, mig_strategy: str) -> dict[str, str]:
    if not pool.gpu.product_labels:
        return {"nvidia.com/gpu.present": "true"}  # a model too new for the catalog to know its label
    product = pool.gpu.product_labels[0]
    labels = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": str(pool.gpus_per_node)}
    devices = pool.mig_devices()
    if len(devices) > 1 and mig_strategy == "single":  # only DRA allows it
        return {**labels, "nvidia.com/gpu.count": "0", "nvidia.com/gpu.product": f"{product}-MIG-INVALID"}
    if devices and mig_strategy == "single":
        (name, per_gpu), *_ = devices
        profile = pool.gpu.profile(name)
        assert profile is not None
        product += f"-MIG-{profile.label_suffix}"
        labels["nvidia.com/gpu.count"] = str(per_gpu * pool.gpus_per_node)
    for name, per_gpu in devices if mig_strategy == "mixed" else ():
        profile = pool.gpu.profile(name)
        assert profile is not None
        labels[f"{profile.resource_name}.count"] = str(per_gpu * pool.gpus_per_node)
    if pool.sharing.is_shared and not pool.sharing.rename_by_default:
        product += "-SHARED"
    return {**labels, "nvidia.com/gpu.product": product}


def matching_state(cluster: Cluster) -> ClusterState:
    backend = verify_backend(cluster)
    assert backend is not None
    expected = expected_state(cluster, backend)
    nodes = []
    slices = []
    api_version = resource_api_version(cluster.kubernetes)
    mig_strategy = expected.clusterpolicy.get("mig", {}).get("strategy", cluster.mig_strategy)  # DRA: mixed
    for pool in expected.pools:
        labels = {**dict(pool.pool.node_selector), **pool.labels, **_gfd_labels(pool.pool, mig_strategy)}
        if MIG_CONFIG_LABEL in pool.labels:
            labels[MIG_CONFIG_STATE_LABEL] = "success"
        resources = {resource: str(count) for resource, count in pool.resources.items()}
        annotations = _registration(cluster, pool.pool, pool.offered)
        for index in range(pool.pool.nodes):
            name = f"{pool.name}-{index}"
            nodes.append(Node(name, labels, (), None, None, HERE, resources, resources, annotations=annotations))
            if cluster.backend == "dra":
                slices.append(_read(node_slice(name, node_devices(pool.pool, name), api_version)))
    spec: dict[str, Any] = {}
    _merge(spec, expected.clusterpolicy)
    configmaps = tuple(
        ConfigMap(c.name, c.namespace, {k: v if isinstance(v, str) else dump_yaml(v) for k, v in c.data.items()}, HERE)
        for c in expected.configmaps
    )
    count = len(nodes)
    daemonsets = tuple(
        DaemonSet(name, cluster.operator.namespace, count, count, count, True, HERE)
        for name in backend.daemonsets(cluster)
    )
    policy = ClusterPolicy("cluster-policy", spec, {}, "ready", HERE)
    release = tuple(
        _rolled_out(rollout, chart.namespace, count)
        for chart in backend_of(cluster).releases(cluster)
        for rollout in chart.rollouts
    )
    dra = cluster.backend == "dra"
    return ClusterState(
        "model", tuple(nodes), (policy,), configmaps, daemonsets, (), release=release,
        resourceslices=tuple(slices) if dra else None,
        dra=tuple(_read(d) for d in expected.objects if d["kind"] in DRA_KINDS) if dra else None,
    )  # fmt: skip


def _read(document: dict[str, Any]) -> Any:
    """A Kubernetes object as the cluster's state holds it."""
    found = READERS[(document["apiVersion"], document["kind"])](document, HERE)
    assert not isinstance(found, str), found
    return found


def _registration(cluster: Cluster, pool: Pool, offered: dict[str, int]) -> dict[str, str]:
    """HAMi's annotation for a node of the pool: each GPU with its share of what the node offers in all."""
    if cluster.backend != "hami":
        return {}
    share = {resource: count // pool.gpus_per_node for resource, count in offered.items()}
    gpu = {
        "count": share["nvidia.com/gpu"],
        "devmem": share.get("nvidia.com/gpumem", 0),
        "devcore": share["nvidia.com/gpucores"],
        "type": pool.gpu.product_labels[0] if pool.gpu.product_labels else pool.gpu.id,
        "mode": "hami-core",
        "health": True,
    }
    devices = [{"id": f"GPU-{index}", "index": index, **gpu} for index in range(pool.gpus_per_node)]
    return {"hami.io/node-nvidia-register": json.dumps(devices)}


def _rolled_out(rollout: str, namespace: str, nodes: int) -> DaemonSet | Deployment:
    kind, _, name = rollout.partition("/")
    if kind == "daemonset":
        return DaemonSet(name, namespace, nodes, nodes, nodes, True, HERE)
    return Deployment(name, namespace, 1, 1, 1, True, HERE)


def _merge(target: dict[str, Any], patch: dict[str, Any]) -> None:
    for key, value in patch.items():
        if isinstance(value, dict):
            _merge(target.setdefault(key, {}), value)
        elif value is not None:
            target[key] = value


def _passes(mapping: dict[str, Any]) -> None:
    try:
        fleet = load_fleet(mapping)
    except FleetError:
        assume(False)
        raise
    for cluster in fleet.clusters:
        result = verify_cluster(cluster, matching_state(cluster), fleet_label="fleet.yaml")
        assert [f.message for f in result.findings] == []
        assert result.pools is not None
        assert all(t.advertised == t.intended for pool in result.pools for t in pool.capacity)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fleets())
def test_a_cluster_that_matches_the_fleet_passes_every_check(mapping: dict[str, Any]) -> None:
    _passes(mapping)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(hami_fleets())
def test_a_hami_cluster_that_matches_the_fleet_passes_every_check(mapping: dict[str, Any]) -> None:
    _passes(mapping)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dra_fleets())
def test_a_dra_cluster_that_matches_the_fleet_passes_every_check(mapping: dict[str, Any]) -> None:
    _passes(mapping)
