"""Properties: any valid fleet asking for node groups and alerts renders, every pool gets its node-group file
with every label its nodes need (written, or left to the provider and named in the header), and the rules
read every pool by its own labels."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from test_properties import SETTINGS, fleets

from gpustack_gen import load_fleet, render
from gpustack_gen.compile.alerts.promql import label_metric_name
from gpustack_gen.compile.backends import backend_of
from gpustack_gen.compile.node_groups import PROVIDERS, node_group_file

LABEL_PATHS = {
    "karpenter": ("spec", "template", "metadata", "labels"),
    "eksctl": ("managedNodeGroups", 0, "labels"),
    "gke": ("node_config", "labels"),
    "aks": ("properties", "nodeLabels"),
    "cluster-api": ("spec", "template", "metadata", "labels"),
}


def _at(document: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        document = document[part]
    return document


@SETTINGS
@given(fleets(), st.sampled_from(sorted(PROVIDERS)))
def test_every_pool_gets_every_label_it_needs(mapping: dict[str, Any], provider: str) -> None:
    mapping.setdefault("defaults", {}).update({"nodeGroups": {"provider": provider}, "alerts": {"enabled": True}})
    fleet = load_fleet(mapping)
    bundle = render(fleet)  # validates every artifact
    for cluster in fleet.clusters:
        backend_labels = backend_of(cluster).pool_labels(cluster)
        rules = bundle[f"{cluster.name}/alerts.yaml"].text
        for pool in cluster.pools:
            path = node_group_file(cluster, pool)
            assert path is not None
            file = bundle[f"{cluster.name}/{path}"]
            written = _at(file.documents[0], LABEL_PATHS[provider])
            header = file.text.split("\n# ", 1)[1].split("\napiVersion:")[0]
            for key, value in {**dict(pool.node_selector), **backend_labels[pool.name]}.items():
                assert written.get(key) == value or f"{key} In [{value}]" in header or f"{key}={value}" in header, (
                    path,
                    key,
                )
            for key, _ in pool.node_selector:
                assert label_metric_name(key) in rules
