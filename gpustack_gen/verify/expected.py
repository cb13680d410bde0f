"""What the fleet says a cluster must show, taken from the model and the compilers, never recomputed.

Per pool: the labels its nodes carry (the backend's ``pool_labels``, which ``plan`` sets too), what each
node advertises in its allocatable (``Cluster.allocatable_per_node``) and what it offers in all
(``Cluster.resources_per_node``: on HAMi also GPU memory and cores, which the node registers in an
annotation; on the DRA driver the devices of its DeviceClasses, which it publishes in ResourceSlices). Per
cluster: the rendered ClusterPolicy patch and ConfigMaps (``compile_cluster``), and the other objects the
backend renders (DeviceClasses, claims). The patch is compared as the API server stores it: a field it deletes
holds the CRD's default where there is one (:mod:`.crd_defaults`). GPU models and their product labels come from the catalog.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..compile import EmbeddedYaml, compile_cluster
from ..compile.backends import backend_of
from ..model.fleet import Cluster, Pool
from .crd_defaults import as_stored

if TYPE_CHECKING:
    from ..compile.artifact import Artifact
    from .backends import VerifyBackend


@dataclass(frozen=True)
class PoolExpectation:
    pool: Pool
    labels: dict[str, str]  # label -> value every node of the pool carries
    resources: dict[str, int]  # extended resource -> what each node advertises in its allocatable
    offered: dict[str, int]  # resource -> what each node offers in all, allocatable or registered elsewhere

    @property
    def name(self) -> str:
        return self.pool.name

    @property
    def advertised(self) -> dict[str, int]:
        """What a node must show to serve the pool at all: its allocatable resources, or where the backend puts
        none there (DRA), what it registers elsewhere (the devices of the pool's DeviceClasses)."""
        return self.resources or self.offered


@dataclass(frozen=True)
class RenderedConfigMap:
    name: str
    namespace: str
    data: dict[str, Any]  # key -> the config it holds as data (a YAML file), or its text


@dataclass(frozen=True)
class Expected:
    cluster: Cluster
    pools: tuple[PoolExpectation, ...]
    clusterpolicy: dict[str, Any]  # the rendered merge patch's spec as the API server stores it (null: absent)
    configmaps: tuple[RenderedConfigMap, ...]
    backend: VerifyBackend
    rendered: str = "rendered"  # where `gpustack-gen render --out` writes, as the hints' commands name it
    objects: tuple[dict[str, Any], ...] = ()  # every object the backend renders for kubectl apply -k
    fleet: str = "fleet.yaml"  # the fleet file as the user named it, for the hints' commands

    def pool(self, name: str) -> PoolExpectation:
        return next(p for p in self.pools if p.name == name)


def expected_state(
    cluster: Cluster, backend: VerifyBackend, rendered: str = "rendered", fleet: str = "fleet.yaml"
) -> Expected:
    labels = backend_of(cluster).pool_labels(cluster)
    pools = tuple(
        PoolExpectation(p, labels.get(p.name, {}), cluster.allocatable_per_node(p), cluster.resources_per_node(p))
        for p in cluster.pools
    )
    artifacts = compile_cluster(cluster)
    stored: dict[str, Any] = {}  # no Operator, no ClusterPolicy: the clusterpolicy check does not apply
    if backend_of(cluster).INSTALLS_OPERATOR:
        patch = next(a for a in artifacts if a.kind == "clusterpolicy-patch").documents[0]["spec"]
        stored = as_stored(patch, cluster.operator.release)
    objects = tuple(document for artifact in backend_of(cluster).objects(cluster) for document in artifact.documents)
    return Expected(cluster, pools, stored, _configmaps(artifacts), backend, rendered, objects, fleet)


def _configmaps(artifacts: list[Artifact]) -> tuple[RenderedConfigMap, ...]:
    found = []
    for artifact in artifacts:
        for document in artifact.documents:
            if document.get("apiVersion") == "v1" and document.get("kind") == "ConfigMap":
                metadata = document["metadata"]
                data = {
                    key: value.data if isinstance(value, EmbeddedYaml) else value
                    for key, value in document.get("data", {}).items()
                }
                found.append(RenderedConfigMap(metadata["name"], metadata["namespace"], data))
    return tuple(found)
