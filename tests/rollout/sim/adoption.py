"""A cluster whose GPU Operator already runs, with its own ConfigMaps, before gpustack-gen takes it over (the
first plan after ``gpustack-gen import``). From a change folder's ``cluster.yaml``:

    running:
      configMaps: {time-slicing-config: {any: "version: v1\\n..."}}   # in the Operator's namespace
      values: {devicePlugin: {config: {name: time-slicing-config, default: any}}}  # the release's values
      labels: {h100: {nvidia.com/device-plugin.config: any}}        # per pool, what its nodes carry today

The model installs that Operator with those values, and its config-manager resolves each node's config in
the mounted ConfigMap as for any other (k8s-device-plugin@v0.17.4 cmd/config-manager/main.go:334-392): a
label naming a key the mounted ConfigMap lacks makes it exit, `specified config X does not exist`
(main.go:351-354, exiting via :245-252 and :206-210).
"""

from __future__ import annotations

from typing import Any

from .cluster import Cluster, SimulationError


def install(cluster: Cluster, version: str, running: dict[str, Any], selectors: dict[str, dict[str, str]]) -> None:
    """``selectors``: pool name -> its nodeSelector, to find the nodes ``labels`` names."""
    cluster.namespaces.add(cluster.namespace)
    for name, data in (running.get("configMaps") or {}).items():
        cluster.apply_configmap(name, {str(k): str(v) for k, v in data.items()})
    for pool, labels in (running.get("labels") or {}).items():
        for node in cluster.nodes.values():
            if all(node.labels.get(k) == v for k, v in selectors[pool].items()):
                cluster.set_labels(node, {str(k): str(v) for k, v in labels.items()})
    cluster.helm_upgrade(version, [running.get("values") or {}], reuse=False, openapi_checked=False)
    cluster.advance(600)
    for node in cluster.nodes.values():
        if not node.dp.running:
            raise SimulationError(f"set-up: {node.name}'s device plugin does not run ({node.dp.error})")
