"""An Operator DaemonSet the backend needs is missing or not fully rolled out (desired vs ready vs updated), or
one it must not run is there (on HAMi, the Operator's own device plugin).

The Operator rolls its DaemonSets one node at a time (``maxUnavailable: 1``), and a broken template stalls
after the first node; in v25.3.3 the ClusterPolicy can show ``ready`` before a rollout ends
(``isDaemonSetReady``), so the DaemonSets' own counts are what tells.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Severity
from .. import commands
from ..expected import Expected
from ..model import Finding
from ..observed import Observed
from ..rollouts import counts, counts_text, pods_hint, rolled_out

ID = "operator-pods"
NEEDS = ("operator",)


def findings(expected: Expected, observed: Observed) -> Iterator[Finding]:
    namespace = expected.cluster.operator.namespace
    daemonsets = {ds.name: ds for ds in observed.state.daemonsets or () if ds.namespace in (namespace, None)}
    gpu_nodes = sum(len(observed.nodes_of(pool)) for pool in expected.pools)
    for name in expected.backend.daemonsets(expected.cluster):
        subject = f"DaemonSet {namespace}/{name}"
        ds = daemonsets.get(name)
        if ds is None:
            yield Finding(
                ID, Severity.ERROR, subject, f"{subject}: absent", None, None, "rolled out", None,
                "the ClusterPolicy does not enable it, or the Operator cannot create it: "
                + commands.logs(expected.cluster, namespace, "deploy/gpu-operator"),
            )  # fmt: skip
            continue
        text = counts_text(ds)
        if ds.desired == 0 and gpu_nodes:
            yield Finding(
                ID, Severity.ERROR, subject, f"{subject}: runs on no node ({text})", None, None, "rolled out",
                counts(ds), "its nodeSelector matches no GPU node: check the nodes' nvidia.com/gpu.deploy.* labels and NFD",
            )  # fmt: skip
        elif not rolled_out(ds):
            yield Finding(
                ID, Severity.ERROR, subject, f"{subject}: not rolled out ({text})", None, None, "rolled out",
                counts(ds), pods_hint(expected.cluster, ds, observed.state.pods or (), namespace),
            )  # fmt: skip
    for name, why in expected.backend.unwanted_daemonsets(expected.cluster).items():
        ds = daemonsets.get(name)
        if ds is not None:
            subject = f"DaemonSet {namespace}/{name}"
            yield Finding(
                ID, Severity.ERROR, subject, f"{subject}: present ({counts_text(ds)})", None, None, None, counts(ds),
                why,
            )  # fmt: skip
