"""What would stop a plan's drain or driver upgrade, read from the cluster's own listing (``kubectl get
nodes,pods,pdb --all-namespaces -o json``): the pre-flight steps pipe that into ``gpustack-gen blockers``, whose
exit status stops a pasted runbook before any node is cordoned.

* A PodDisruptionBudget refuses an eviction that would leave fewer healthy pods than it allows; kubectl drain
  retries it every 5 s until its timeout (kubectl@v0.29.0 ``pkg/drain/drain.go:270-276,318-320``). Drained a batch
  at a time, an evicted pod runs again on a node already done, so a budget blocks when it allows no eviction now;
  drained whole, no evicted pod can start before the change is done, so it blocks when it allows fewer evictions
  than it has pods on the drained nodes.
* The driver upgrade controller deletes a node's GPU pods through kubectl's drain filters with
  ``Force = gpuPodDeletion.force``: a GPU pod without a controller sends the node to ``upgrade-failed``, which
  holds every other node (k8s-operator-libs@7d667fbaa7ac ``pkg/upgrade/pod_manager.go:149-160,193-203``,
  ``upgrade_state.go:1040-1085``).

A pod's GPU resources are those named ``nvidia.com/...`` in its containers' requests or limits (the extended
resources every backend's device plugin advertises).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

GPU_RESOURCE_PREFIX = "nvidia.com/"


class ListingError(ValueError):
    """The input is not a ``kubectl get -o json`` listing."""


LISTING_FAILED = "listing failed"  # the printed pipe's last line when kubectl fails (shell.Pipe.failure)


def load_listing(text: str) -> Any:
    """The listing in ``text``; :class:`json.JSONDecodeError` where it is no JSON, :class:`ListingError` where the
    command that listed it failed (what it printed before failing may lack a whole kind)."""
    if (
        text[-2 * len(LISTING_FAILED) :].rstrip().rpartition("\n")[2] == LISTING_FAILED
    ):  # the tail: no copy of a large listing
        raise ListingError("the kubectl that listed the cluster failed (its error is above), so nothing was checked")
    try:
        return json.loads(text)
    except RecursionError:  # the parser's stack, not ours: the input is at fault
        raise ListingError("nested too deep to be a kubectl listing") from None


class SelectorError(ValueError):
    """A --selector that is no ``key=value[,key=value]`` list."""


def parse_selector(text: str) -> dict[str, str]:
    """A ``key=value,...`` node selector (the equality form the plans print)."""
    pairs = [item.split("=", 1) for item in text.split(",") if item]
    if not pairs or any(len(pair) != 2 or not pair[0] for pair in pairs):
        raise SelectorError(f"not a key=value[,key=value] selector: {text!r}")
    return {key: value for key, value in pairs}


def _items(listing: Any, kind: str) -> Iterator[Mapping[str, Any]]:
    if not isinstance(listing, Mapping) or not isinstance(listing.get("items"), list):
        raise ListingError("not a kubectl listing (an object with items)")
    for item in listing["items"]:
        if isinstance(item, Mapping) and item.get("kind") == kind:
            yield item


def _mapping(value: Any) -> Mapping[str, Any]:
    """``value`` where the listing has an object there, else empty: a field of the wrong type holds nothing."""
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _meta(item: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = item.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _labels(item: Mapping[str, Any]) -> Mapping[str, Any]:
    labels = _meta(item).get("labels")
    return labels if isinstance(labels, Mapping) else {}


def _name(item: Mapping[str, Any]) -> str:
    meta = _meta(item)
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _selected_nodes(listing: Any, selector: Mapping[str, str]) -> set[str]:
    return {
        _meta(node)["name"]
        for node in _items(listing, "Node")
        if isinstance(_meta(node).get("name"), str)
        and all(_labels(node).get(key) == value for key, value in selector.items())
    }


def _pods_on(listing: Any, nodes: set[str | None] | set[str]) -> list[Mapping[str, Any]]:
    """The pods bound to ``nodes`` (None: not bound) that still run (a finished pod is not evicted)."""
    return [
        pod
        for pod in _items(listing, "Pod")
        if _node_name(pod) in nodes and _mapping(pod.get("status")).get("phase") not in ("Succeeded", "Failed")
    ]


def _node_name(pod: Mapping[str, Any]) -> str | None:
    """The node a pod is bound to; a name that is no string binds it nowhere kubectl would print."""
    name = _mapping(pod.get("spec")).get("nodeName")
    return name if isinstance(name, str) or name is None else ""


def _controller(pod: Mapping[str, Any]) -> str | None:
    for owner in _list(_meta(pod).get("ownerReferences")):
        if isinstance(owner, Mapping) and owner.get("controller"):
            return str(owner.get("kind"))
    return None


def _uses_gpus(pod: Mapping[str, Any]) -> bool:
    containers = _list(_mapping(pod.get("spec")).get("containers"))
    for container in containers:
        resources = _mapping(_mapping(container).get("resources"))
        for part in ("requests", "limits"):
            if any(str(name).startswith(GPU_RESOURCE_PREFIX) for name in _mapping(resources.get(part))):
                return True
    return False


def _matches(selector: Any, labels: Mapping[str, Any]) -> bool:
    """A label selector (matchLabels and matchExpressions); an empty one selects every pod, a missing one none
    (policy/v1 PodDisruptionBudget)."""
    if not isinstance(selector, Mapping):
        return False
    if any(labels.get(k) != v for k, v in _mapping(selector.get("matchLabels")).items()):
        return False
    for expression in _list(selector.get("matchExpressions")):
        expression = _mapping(expression)
        key, operator, values = expression.get("key"), expression.get("operator"), _list(expression.get("values"))
        if not isinstance(key, str):
            return False
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def _allowed(budget: Mapping[str, Any]) -> int:
    value = _mapping(budget.get("status")).get("disruptionsAllowed") or 0
    if not isinstance(value, int) or isinstance(value, bool):
        raise ListingError(
            f"PodDisruptionBudget {_name(budget)}: status.disruptionsAllowed {value!r} is not an integer"
        )
    return value


def blocking_budgets(listing: Any, selector: Mapping[str, str], *, whole_pool: bool) -> list[str]:
    """The budgets that would hold a drain of the nodes ``selector`` matches, each with the count it allows and
    the pods it has there; ``whole_pool``: every selected node is drained at once."""
    pods = [pod for pod in _pods_on(listing, _selected_nodes(listing, selector)) if _controller(pod) != "DaemonSet"]
    found = []
    for budget in _items(listing, "PodDisruptionBudget"):
        namespace = _meta(budget).get("namespace")
        covered = [
            pod
            for pod in pods
            if _meta(pod).get("namespace") == namespace
            and _matches(_mapping(budget.get("spec")).get("selector"), _labels(pod))
        ]
        if not covered:
            continue
        allowed = _allowed(budget)
        if allowed == 0 or (whole_pool and allowed < len(covered)):
            found.append(f"{_name(budget)} allows {allowed} of its {len(covered)} pods there")
    return sorted(found)


def bare_gpu_pods(listing: Any, selector: Mapping[str, str]) -> list[str]:
    """The pods without a controller that hold GPUs on the nodes ``selector`` matches, or ask for them and are not
    placed yet (Pending: the scheduler may put one there while the plan runs)."""
    nodes: set[str | None] = {*_selected_nodes(listing, selector), None}
    pods = _pods_on(listing, nodes)
    return sorted(_name(pod) for pod in pods if _controller(pod) is None and _uses_gpus(pod))
