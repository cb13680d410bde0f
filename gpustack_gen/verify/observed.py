"""The cluster as read, with each node matched to the pool whose ``nodeSelector`` it satisfies."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..k8s_state import Node
from .expected import Expected, PoolExpectation
from .model import NodeView, Registration
from .state import ClusterState

# Labels that show a node has an NVIDIA GPU whatever its device plugin does: the Operator's own, GPU feature
# discovery's (which needs the driver), and NFD's PCI vendor label (vendor 10de is NVIDIA).
GPU_PRESENT_LABELS = ("nvidia.com/gpu.present", "feature.node.kubernetes.io/pci-10de.present")
GPU_COUNT_LABEL = "nvidia.com/gpu.count"
NVIDIA_RESOURCE_PREFIX = "nvidia.com/"

_QUANTITY = re.compile(r"([0-9]+)(k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?\Z")
_SUFFIXES = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
_SUFFIXES.update({f"{s}i": 1024 ** (i + 1) for i, s in enumerate("KMGTPE")})


def count(quantity: str | None) -> int | None:
    """An extended resource's quantity as a whole number (``"4"``, ``"1k"``); None when absent or not whole."""
    if quantity is None:
        return None
    match = _QUANTITY.fullmatch(quantity)
    if match is None:
        return None
    return int(match.group(1)) * _SUFFIXES.get(match.group(2) or "", 1)


def advertised(node: Node, resource: str) -> int:
    """What the node's allocatable offers of ``resource`` (0 when it lacks it)."""
    return count(node.allocatable.get(resource)) or 0


def offered(expected: Expected, pool: PoolExpectation, node: Node, state: ClusterState) -> dict[str, int]:
    """What the node offers of each of the pool's resources: its allocatable, and where the backend keeps a
    registration of its own (HAMi's GPU memory and cores, the DRA driver's devices), what that registers."""
    return _offered(pool, node, expected.backend.registration(NodeView(expected, pool, node, state)))


def _offered(pool: PoolExpectation, node: Node, registration: Registration | None) -> dict[str, int]:
    found = {resource: advertised(node, resource) for resource in pool.resources}
    for resource in pool.offered:
        if resource not in found:
            found[resource] = registration.total(resource) if registration is not None else 0
    return found


def advertises(expected: Expected, pool: PoolExpectation, node: Node, state: ClusterState) -> bool:
    """Whether the node shows any of what serves the pool (:attr:`PoolExpectation.advertised`)."""
    return _shows(pool, offered(expected, pool, node, state))


def _shows(pool: PoolExpectation, shown: dict[str, int]) -> bool:
    return any(shown.get(resource, 0) for resource in pool.advertised)


def registered_nodes(expected: Expected, observed: Observed) -> Iterator[tuple[PoolExpectation, Node, Registration]]:
    """Each node that advertises its pool's resources, with what it registered with the backend's scheduler; none
    where the backend keeps no registration of its own. A node that advertises nothing is left out: its
    registration may be stale, and ``gpu-not-advertised`` says so."""
    for pool in expected.pools:
        for node in observed.nodes_of(pool):
            registration = expected.backend.registration(NodeView(expected, pool, node, observed.state))
            if not _shows(pool, _offered(pool, node, registration)):  # advertises(), registering once
                continue
            if registration is None:
                return
            yield pool, node, registration


def has_gpu(node: Node) -> bool:
    """Whether labels or resources show an NVIDIA GPU on the node, advertised or not."""
    if any(node.labels.get(label) == "true" for label in GPU_PRESENT_LABELS):
        return True
    if (count(node.labels.get(GPU_COUNT_LABEL)) or 0) > 0:
        return True
    return any(key.startswith(NVIDIA_RESOURCE_PREFIX) for key in {**node.capacity, **node.allocatable})


def selects(pool: PoolExpectation, node: Node) -> bool:
    return all(node.labels.get(key) == value for key, value in pool.pool.node_selector)


@dataclass(frozen=True)
class Observed:
    state: ClusterState
    members: dict[str, tuple[Node, ...]]  # pool name -> its nodes, in the order read
    overlaps: tuple[tuple[Node, tuple[str, ...]], ...]  # nodes several pools select: the pools (the first counts)
    unmatched_gpu_nodes: tuple[Node, ...]

    def nodes_of(self, pool: PoolExpectation) -> tuple[Node, ...]:
        return self.members.get(pool.name, ())


def observe(expected: Expected, state: ClusterState) -> Observed:
    members: dict[str, list[Node]] = {pool.name: [] for pool in expected.pools}
    overlaps = []
    unmatched = []
    for node in state.nodes or ():
        pools = [pool.name for pool in expected.pools if selects(pool, node)]
        if pools:
            members[pools[0]].append(node)
            if len(pools) > 1:
                overlaps.append((node, tuple(pools)))
        elif has_gpu(node):
            unmatched.append(node)
    return Observed(state, {k: tuple(v) for k, v in members.items()}, tuple(overlaps), tuple(unmatched))
