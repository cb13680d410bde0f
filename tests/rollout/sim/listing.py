"""What the plan's command substitutions print: ``kubectl get`` of nodes and pods, and ``$(...)`` expansion.

* Label selectors: ``k=v``, ``k!=v``, ``k`` (exists) and ``!k`` (absent), comma-separated terms all holding
  (``kubernetes/apimachinery@v0.29.0 pkg/labels/selector.go`` Parse).
* ``-o name`` prints ``node/N`` per line; ``-o jsonpath=`` as client-go's jsonpath: ``{.items[i]...}`` fails on
  an index out of range (``util/jsonpath/jsonpath.go`` evalArray: "array index out of bounds"), a slice
  ``[a:b]`` is clamped, several results are joined by spaces.
* ``--field-selector spec.nodeName=N`` lists the pods bound to N (``spec.nodeName=`` the unbound ones).
* ``--selector app.kubernetes.io/name=nvidia-device-plugin,app.kubernetes.io/instance=R`` lists the standalone
  chart's pods: one per node its DaemonSet places on (the chart's pod labels, ``_helpers.tpl:61-79``).
* Bash: ``$(...)`` is replaced by the command's stdout; unquoted, it splits into words.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .cluster import Cluster, SimulationError

_ITEMS = re.compile(r"^jsonpath=\{\.items\[(\d+)(?::(\d+))?\]\.metadata\.name\}$")
_NOT_DAEMONSET = 'jsonpath={range .items[?(@.metadata.ownerReferences[0].kind!="DaemonSet")]}'


def selector_matches(selector: str, labels: dict[str, str]) -> bool:
    for term in selector.split(","):
        if "!=" in term:
            key, value = term.split("!=", 1)
            if labels.get(key) == value:
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif "=" in term:
            key, value = term.split("=", 1)
            if labels.get(key) != value:
                return False
        elif labels.get(term) is None:
            return False
    return True


def expand(text: str, capture: Callable[[str], str]) -> str:
    """Replace each ``$(...)`` (innermost first) by ``capture`` of its command; single quotes are skipped while
    looking for the closing parenthesis (a jsonpath filter has its own)."""
    start = text.find("$(")
    if start < 0:
        return text
    depth, index = 1, start + 2
    while depth:
        if index >= len(text):
            raise SimulationError(f"unbalanced $( in {text!r}")
        if text[index] == "'":
            index = text.index("'", index + 1)
        elif text.startswith("$(", index):
            depth += 1
            index += 1
        elif text[index] == ")":
            depth -= 1
        index += 1
    inner = expand(text[start + 2 : index - 1], capture)
    return text[:start] + capture(inner) + expand(text[index:], capture)


def _option(words: list[str], name: str) -> str | None:
    for index, word in enumerate(words):
        if word == name:
            return words[index + 1]
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    return None


def output(cluster: Cluster, words: list[str]) -> str:
    if words[:3] == ["kubectl", "get", "nodes"]:
        selector = _option(words, "--selector") or ""
        names = sorted(n.name for n in cluster.nodes.values() if selector_matches(selector, n.labels))
        form = _option(words, "-o")
        if form == "name":
            return "".join(f"node/{name}\n" for name in names)
        match = _ITEMS.match(form or "")
        if match is None:
            raise SimulationError(f"the model cannot print nodes as {form!r}")
        first = int(match.group(1))
        if match.group(2) is None:
            if first >= len(names):
                raise SimulationError("error: error executing jsonpath: array index out of bounds")
            return names[first]
        return " ".join(names[first : int(match.group(2))])
    if words[:3] == ["kubectl", "get", "pods"] and _option(words, "--selector"):
        field = _option(words, "--field-selector")
        node = field.removeprefix("spec.nodeName=") if field is not None else None
        return _standalone_pods(cluster, _option(words, "--selector") or "", _option(words, "-o"), node)
    if words[:3] == ["kubectl", "get", "pods"]:
        field = _option(words, "--field-selector") or ""
        form = _option(words, "-o") or ""
        if not field.startswith("spec.nodeName=") or not form.startswith(_NOT_DAEMONSET):
            raise SimulationError(f"the model cannot list pods as {' '.join(words)!r}")
        node = field.removeprefix("spec.nodeName=") or None
        # The model's pods are the workloads' and bare ones; the operands (DaemonSets) are not pods in it.
        return " ".join(pod.workload for pod in cluster.pods if pod.node == node)
    raise SimulationError(f"the model cannot print {' '.join(words)!r}")


def objects(cluster: Cluster) -> dict[str, Any]:
    """``kubectl get nodes,pods,pdb --all-namespaces -o json``: one List of the three kinds.

    A workload's pods carry ``app=<name>`` and a ReplicaSet as controller, a bare pod none; each budget selects
    its workload's pods, ``status.disruptionsAllowed`` being its healthy pods (the model's bound ones) minus
    ``minAvailable``, never below 0 (kubernetes@v1.29 ``pkg/controller/disruption/disruption.go``
    updatePdbStatus: currentHealthy - desiredHealthy)."""
    items: list[dict[str, Any]] = [
        {"kind": "Node", "metadata": {"name": node.name, "labels": dict(node.labels)}}
        for node in sorted(cluster.nodes.values(), key=lambda n: n.name)
    ]
    for index, pod in enumerate(cluster.pods):
        namespace, name = pod.workload.split("/", 1)
        owners = [{"kind": "ReplicaSet", "name": name, "controller": True}] if pod.controller else []
        items.append(
            {
                "kind": "Pod",
                "metadata": {
                    "namespace": namespace,
                    "name": f"{name}-{index}" if pod.controller else name,  # a bare pod is named by hand
                    "labels": {"app": name},
                    "ownerReferences": owners,
                },
                "spec": {
                    "nodeName": pod.node,
                    "containers": [{"name": name, "resources": {"limits": dict(pod.requests)}}],
                },
                "status": {"phase": "Running" if pod.node else "Pending"},
            }
        )
    for workload, minimum in sorted(cluster.pdbs.items()):
        namespace, name = workload.split("/", 1)
        healthy = sum(1 for p in cluster.pods if p.workload == workload and p.node is not None)
        items.append(
            {
                "kind": "PodDisruptionBudget",
                "metadata": {"namespace": namespace, "name": name},
                "spec": {"minAvailable": minimum, "selector": {"matchLabels": {"app": name}}},
                "status": {"disruptionsAllowed": max(0, healthy - minimum)},
            }
        )
    return {"apiVersion": "v1", "kind": "List", "items": items}


def _standalone_pods(cluster: Cluster, selector: str, form: str | None, node: str | None) -> str:
    """``node``: only the pod bound to that node (``--field-selector spec.nodeName=``)."""
    release = cluster.standalone
    labels = {"app.kubernetes.io/name": "nvidia-device-plugin"}
    if release is not None:
        labels["app.kubernetes.io/instance"] = release.name
    if form != "name" or not selector_matches(selector, labels) or "app.kubernetes.io/instance" not in selector:
        raise SimulationError(f"the model cannot list pods by {selector!r} as {form!r}")
    if release is None:
        return ""
    placed = sorted(n.name for n in cluster.nodes.values() if release.schedules_on(n.labels) and node in (None, n.name))
    return "".join(f"pod/{release.daemonset}-{name}\n" for name in placed)
