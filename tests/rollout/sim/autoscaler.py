"""A node-group autoscaler as the model needs it (research real-world.md §5, node-groups.md §1):

* it provisions for pods the scheduler could not place that are unbound and not a DaemonSet's (Karpenter
  ``kubernetes-sigs/karpenter@v1.14.1 pkg/utils/pod/scheduling.go:96-131``): here a Pending pod asking for a
  GPU resource whose nodeSelector the pool's node-group template matches;
* the new node gets the template's labels as they are at that moment (``pkg/apis/v1/nodepool.go:204-209``;
  registration copies them onto the Node, ``pkg/controllers/nodeclaim/lifecycle/registration.go:205-221``), not
  what the plan has set on the running nodes since; it is neither cordoned nor marked by any earlier step;
* an empty node it added is removed after ``--scale-down-unneeded-time`` (10 min in managed offerings' docs,
  real-world.md §5); a cordoned node is left alone (whether drained nodes are removed is unverified there: the
  model takes the case a plan can survive).

The template changes only when a plan's node-group step says so (as a person following it would, with the labels
it names), so a node added before that step is born with the old labels and one added after with the new.

The node group's maximum is its pool's size plus ``surge`` nodes. How long a node takes to register is not
measured; any delay shows whether the plan's later steps see it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpustack_gen.compile.node_groups.nodes import KUBERNETES_DOMAINS, in_domains

if TYPE_CHECKING:
    from collections.abc import Callable

    from .cluster import Cluster, Node

PROVISION_SECONDS = 120
SCALE_DOWN_UNNEEDED_SECONDS = 600


@dataclass
class Autoscaler:
    templates: dict[str, dict[str, str]]  # pool -> its node-group template's labels now
    build: Callable[[str, str, dict[str, str]], Node]  # pool, node name, labels -> a node of the pool's shape
    surge: int = 1
    added: dict[str, list[str]] = field(default_factory=dict)
    launching: dict[str, float] = field(default_factory=dict)  # pool -> when its new node registers
    empty_since: dict[str, float] = field(default_factory=dict)
    count: int = 0

    def set_template(self, pool: str, reason: str) -> None:
        """A node-group step: the pool's template gets exactly the labels it names; those Kubernetes sets on the
        node itself are not the template's to change."""
        if pool not in self.templates:
            return
        match = re.search(r"\blabels (.*?); taints ", reason)
        if match is None:
            raise ValueError(f"a node-group step that names no labels: {reason}")
        named = {} if match.group(1) == "none" else dict(item.split("=", 1) for item in match.group(1).split(", "))
        kept = {k: v for k, v in self.templates[pool].items() if in_domains(k, KUBERNETES_DOMAINS)}
        self.templates[pool] = {**kept, **named}

    def step(self, cluster: Cluster) -> None:
        for pool, labels in self.templates.items():
            if pool in self.launching:
                if cluster.now >= self.launching[pool]:
                    del self.launching[pool]
                    name = f"{pool}-auto-{self.count}"
                    self.count += 1
                    self.added.setdefault(pool, []).append(name)
                    cluster.join(self.build(pool, name, dict(labels)))
                continue
            if len(self.added.get(pool, [])) >= self.surge:
                continue
            if any(
                pod.node is None
                and any(r.startswith("nvidia.com/") for r in pod.requests)
                and all(labels.get(k) == v for k, v in pod.selector.items())
                for pod in cluster.pods
            ):
                self.launching[pool] = cluster.now + PROVISION_SECONDS
        for names in self.added.values():
            for name in list(names):
                node = cluster.nodes.get(name)
                if node is None or node.unschedulable or cluster.pods_on(name):
                    self.empty_since.pop(name, None)
                    continue
                since = self.empty_since.setdefault(name, cluster.now)
                if cluster.now - since >= SCALE_DOWN_UNNEEDED_SECONDS:
                    del cluster.nodes[name]
                    names.remove(name)
                    del self.empty_since[name]
