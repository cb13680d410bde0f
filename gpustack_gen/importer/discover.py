"""Discover node pools from ``kubectl get nodes -o yaml``.

GPU nodes (those with ``nvidia.com/gpu.product``) are grouped by product (``-SHARED`` and ``-MIG-...``
suffixes dropped), GPU count, ``nvidia.com/device-plugin.config``, ``nvidia.com/mig.config`` and the
values of pool-like labels (``node.kubernetes.io/instance-type``, ``*pool*``, ``*nodegroup*``). Each group
gets the smallest set of labels it shares that selects exactly its nodes among all nodes, preferring
stable labels; hostnames and the labels the Operator and NFD set are never proposed.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..catalog import PRODUCT_LABEL, GpuModel, base_product, get_gpu
from ..compile.artifact import DEVICE_PLUGIN_LABEL, MIG_CONFIG_LABEL
from ..k8s_state import Node
from ..model.names import explain_dns_label, suggest_dns_label
from ..versions import leading_version
from .notes import CLUSTER, Todo, one_line, pool_place

COUNT_LABEL = "nvidia.com/gpu.count"
PRESENT_LABEL = "nvidia.com/gpu.present"
NEW_POOL_LABEL = "gpustack-gen.dev/pool"  # proposed where no existing label set selects a pool exactly

_RUNTIMES = {"containerd": "containerd", "cri-o": "cri-o"}

# Labels never proposed: per node, or set by the Operator, GPU feature discovery or NFD (they change
# with the GPU's state, e.g. the product label gains -SHARED when the sharing changes).
_EXCLUDED_KEYS = frozenset({"kubernetes.io/hostname"})
_EXCLUDED_PREFIXES = (
    "nvidia.com/",
    "feature.node.kubernetes.io/",
    "beta.kubernetes.io/",
    "failure-domain.beta.kubernetes.io/",
    "node.alpha.kubernetes.io/",
)
_POOL_WORDS = ("pool", "nodegroup", "node-group")
_MAX_CANDIDATES = 16
_MAX_SELECTOR_LABELS = 3
# Taints Kubernetes, cloud providers and autoscalers set and remove by themselves.
_TRANSIENT_TAINT_PREFIXES = ("node.kubernetes.io/", "node.cloudprovider.kubernetes.io/", "karpenter.sh/")
_TRANSIENT_TAINTS = frozenset({"ToBeDeletedByClusterAutoscaler", "DeletionCandidateOfClusterAutoscaler"})
_TAINT_EFFECTS = frozenset({"NoSchedule", "PreferNoSchedule", "NoExecute"})

Taint = tuple[str, str | None, str]  # key, value, effect


@dataclass(frozen=True)
class NodeGroup:
    """Identical GPU nodes: one pool of the fleet file."""

    name: str
    product: str  # nvidia.com/gpu.product without the -SHARED / -MIG-... suffixes
    gpu: GpuModel | None
    gpus_per_node: int | None
    plugin_config: str | None  # nvidia.com/device-plugin.config
    mig_config: str | None  # nvidia.com/mig.config
    nodes: tuple[Node, ...]
    selector: dict[str, str]
    selector_exact: bool  # False: proposes NEW_POOL_LABEL, which the nodes do not carry yet
    taints: tuple[Taint, ...]

    @property
    def node_names(self) -> tuple[str, ...]:
        return tuple(n.name for n in self.nodes)


@dataclass(frozen=True)
class Discovery:
    groups: tuple[NodeGroup, ...]
    kubernetes: str | None
    kubernetes_note: str
    runtime: str | None
    runtime_note: str
    todos: tuple[Todo, ...]


def label_tier(key: str) -> int | None:
    """How good a label is as a pool selector: 0 best; None never proposed."""
    if key in _EXCLUDED_KEYS or key.startswith(_EXCLUDED_PREFIXES) or key.endswith("/hostname"):
        return None
    name = key.rsplit("/", 1)[-1].lower()
    if "instance-id" in name or "machine-id" in name:
        return None
    if key == "node.kubernetes.io/instance-type" or any(word in name for word in _POOL_WORDS):
        return 0
    if key.startswith(("topology.", "node-role.kubernetes.io/", "node.kubernetes.io/")) or key in (
        "kubernetes.io/os",
        "kubernetes.io/arch",
    ):
        return 2
    return 1


def _names_pool(key: str) -> bool:
    return any(word in key.rsplit("/", 1)[-1].lower() for word in _POOL_WORDS)


def discover(nodes: Sequence[Node]) -> Discovery:
    todos: list[Todo] = []
    gpu_nodes = [n for n in nodes if n.labels.get(PRODUCT_LABEL)]
    unlabelled = [n.name for n in nodes if n.labels.get(PRESENT_LABEL) == "true" and not n.labels.get(PRODUCT_LABEL)]
    if unlabelled:
        todos.append(
            Todo(
                f"nodes {', '.join(unlabelled)} have GPUs (nvidia.com/gpu.present=true) but no nvidia.com/gpu.product "
                "label yet (GPU feature discovery has not run there); not imported: add them to a pool by hand"
            )
        )
    keyed: dict[tuple[str, str | None, str | None, str | None], list[Node]] = {}
    for node in gpu_nodes:
        key = (
            base_product(node.labels[PRODUCT_LABEL]),
            node.labels.get(COUNT_LABEL),
            node.labels.get(DEVICE_PLUGIN_LABEL),
            node.labels.get(MIG_CONFIG_LABEL),
        )
        keyed.setdefault(key, []).append(node)
    raw_groups: list[tuple[tuple[str, str | None, str | None, str | None], list[Node]]] = []
    for key in sorted(keyed, key=lambda k: tuple(part or "" for part in k)):
        for members in _split_by_pool_labels(keyed[key]):
            raw_groups.append((key, members))

    groups: list[NodeGroup] = []
    used_names: set[str] = set()
    for (product, count, plugin_config, mig_config), members in raw_groups:
        selector, exact = _propose_selector(members, nodes)
        gpu = get_gpu(product)
        name = _pool_name(selector, gpu, product, used_names)
        used_names.add(name)
        if not exact:
            selector = {NEW_POOL_LABEL: name}
        gpus_per_node = int(count) if count is not None and count.isdigit() and int(count) > 0 else None
        taints, taint_todos = _common_taints(members, name)
        todos.extend(taint_todos)
        groups.append(
            NodeGroup(
                name=name,
                product=product,
                gpu=gpu,
                gpus_per_node=gpus_per_node,
                plugin_config=plugin_config,
                mig_config=mig_config,
                nodes=tuple(members),
                selector=selector,
                selector_exact=exact,
                taints=taints,
            )
        )
    kubernetes, kubernetes_note, k8s_todos = _kubernetes(gpu_nodes or list(nodes))
    runtime, runtime_note, runtime_todos = _runtime(gpu_nodes or list(nodes))
    todos.extend(k8s_todos + runtime_todos)
    return Discovery(tuple(groups), kubernetes, kubernetes_note, runtime, runtime_note, tuple(todos))


def _split_by_pool_labels(members: list[Node]) -> list[list[Node]]:
    """Nodes of one GPU configuration, split where pool-like labels (tier 0) differ."""
    keys = sorted({k for n in members for k in n.labels if label_tier(k) == 0})
    parts: dict[tuple[str | None, ...], list[Node]] = {}
    for node in members:
        parts.setdefault(tuple(node.labels.get(k) for k in keys), []).append(node)
    return [parts[k] for k in sorted(parts, key=lambda t: tuple(v or "" for v in t))]


def _propose_selector(members: Sequence[Node], everyone: Sequence[Node]) -> tuple[dict[str, str], bool]:
    """The smallest shared label set that selects exactly ``members``.

    When none does: (the pool-like labels they share, False); those only name the pool.
    """
    first = members[0].labels
    common = [
        (tier, key, value)
        for key, value in first.items()
        if (tier := label_tier(key)) is not None and all(n.labels.get(key) == value for n in members)
    ]
    common.sort(key=lambda item: (item[0], not _names_pool(item[1]), item[1]))
    candidates = common[:_MAX_CANDIDATES]
    target = frozenset(n.name for n in members)
    matches = {
        (key, value): frozenset(n.name for n in everyone if n.labels.get(key) == value) for _, key, value in candidates
    }
    for size in range(1, _MAX_SELECTOR_LABELS + 1):
        best: tuple[tuple[int, int, tuple[str, ...]], dict[str, str]] | None = None
        for combo in itertools.combinations(candidates, size):
            selected = frozenset.intersection(*(matches[(key, value)] for _, key, value in combo))
            if selected != target:
                continue
            score = (
                sum(tier for tier, _, _ in combo),
                sum(not _names_pool(key) for _, key, _ in combo),
                tuple(key for _, key, _ in combo),
            )
            if best is None or score < best[0]:
                best = (score, {key: value for _, key, value in combo})
        if best is not None:
            return best[1], True
    return {key: value for tier, key, value in candidates if tier == 0}, False


def _pool_name(selector: dict[str, str], gpu: GpuModel | None, product: str, used: set[str]) -> str:
    candidates = [v for k, v in selector.items() if _names_pool(k)]
    candidates += [v for k, v in selector.items() if label_tier(k) == 0 and not _names_pool(k)]
    candidates.append(gpu.id if gpu else product)
    base = ""
    for value in candidates:
        folded = value if explain_dns_label(value) is None else suggest_dns_label(value)
        if folded and explain_dns_label(folded) is None:
            base = folded
            break
    base = base or "gpu"
    name, number = base, 2
    while name in used:
        suffix = f"-{number}"
        name = base[: 63 - len(suffix)].rstrip("-") + suffix
        number += 1
    return name


def _taint(raw: dict[str, object]) -> Taint | None:
    key, value, effect = raw.get("key"), raw.get("value"), raw.get("effect")
    if not isinstance(key, str) or not key or effect not in _TAINT_EFFECTS:
        return None
    if key.startswith(_TRANSIENT_TAINT_PREFIXES) or key in _TRANSIENT_TAINTS:
        return None
    return (key, value if isinstance(value, str) and value else None, str(effect))


def _common_taints(members: Sequence[Node], pool: str) -> tuple[tuple[Taint, ...], list[Todo]]:
    per_node = [{t for raw in n.taints if (t := _taint(raw)) is not None} for n in members]
    common = set.intersection(*per_node) if per_node else set()
    some = set().union(*per_node) - common
    todos = [
        Todo(
            f"taint {_taint_text(t)} is on some nodes of pool {pool} only; not imported: taint all of them or none",
            pool_place(pool),
        )
        for t in sorted(some, key=_taint_sort)
    ]
    return tuple(sorted(common, key=_taint_sort)), todos


def _taint_sort(taint: Taint) -> tuple[str, str, str]:
    return (taint[0], taint[1] or "", taint[2])


def _taint_text(taint: Taint) -> str:
    key, value, effect = taint
    return f"{key}{'=' + value if value else ''}:{effect}"


def _most_common(values: Iterable[str]) -> tuple[str, list[str]]:
    counts = Counter(values)
    ranked = sorted(counts, key=lambda v: (-counts[v], v))
    return ranked[0], sorted(counts)


def _kubernetes(nodes: Sequence[Node]) -> tuple[str | None, str, list[Todo]]:
    found = {}
    for node in nodes:
        version = leading_version(node.kubelet_version)
        if version is not None:
            found[node.name] = ("{}.{}.{}".format(*version), node.kubelet_version or "")
    if not found:
        return None, "", []
    chosen, distinct = _most_common(version for version, _ in found.values())
    raw = sorted({text for version, text in found.values() if version == chosen})
    note = f"status.nodeInfo.kubeletVersion {', '.join(raw)}"
    todos = []
    if len(distinct) > 1:
        todos.append(
            Todo(
                f"the nodes run kubelets {', '.join(distinct)}; took {chosen}, the most common: "
                "set the version the cluster will run",
                CLUSTER,
            )
        )
    return chosen, one_line(note), todos


def _runtime(nodes: Sequence[Node]) -> tuple[str | None, str, list[Todo]]:
    names = {}
    for node in nodes:
        if node.runtime_version:
            names[node.name] = node.runtime_version.split("://", 1)[0]
    if not names:
        return None, "", []
    chosen, distinct = _most_common(names.values())
    raw = sorted({n.runtime_version or "" for n in nodes if n.name in names and names[n.name] == chosen})
    todos = []
    if len(distinct) > 1:
        todos.append(Todo(f"the nodes run container runtimes {', '.join(distinct)}; took {chosen}", CLUSTER))
    if chosen not in _RUNTIMES:
        todos.append(
            Todo(
                f"container runtime {chosen!r} is not one the fleet model knows (containerd, cri-o); left to the "
                "default, containerd",
                CLUSTER,
            )
        )
        return None, "", todos
    return _RUNTIMES[chosen], one_line(f"status.nodeInfo.containerRuntimeVersion {', '.join(raw)}"), todos
