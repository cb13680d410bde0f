"""A workload of a Helm release the backend installs beside the Operator is missing or not rolled out (HAMi:
its device plugin DaemonSet and its scheduler Deployment, which also serves its admission webhook).

The release and the workloads it rolls out are the compilers' (``releases``, which ``plan`` installs); the
backend hook says what each does and what fails without it. Applies only to clusters whose backend installs
a release: the objects are read by the release's label (``app.kubernetes.io/instance``), or by the backend's own
selector in every namespace (the standalone plugin's), and a workload found outside the release's namespace is
taken where it is.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...compile.backends import backend_of
from ...compile.releases import ChartRelease
from ...errors import Severity
from ...k8s_state import DaemonSet, Deployment, Pod
from ...workdir import Paths
from .. import commands
from ..expected import Expected
from ..model import Finding
from ..observed import Observed
from ..rollouts import counts, counts_text, pods_hint, rolled_out

ID = "release-pods"
NEEDS = ("release",)
_KIND_NAMES = {"daemonset": "DaemonSet", "deployment": "Deployment"}  # as rollouts name them: daemonset/NAME


def findings(expected: Expected, observed: Observed) -> Iterator[Finding]:
    cluster = expected.cluster
    objects = observed.state.release or ()
    pods = tuple(o for o in objects if isinstance(o, Pod))
    gpu_nodes = sum(len(observed.nodes_of(pool)) for pool in expected.pools)
    for release in backend_of(cluster).releases(cluster):
        # The release's namespace first; then any other one read (a release installed elsewhere is still its own).
        ranked = sorted(
            (o for o in objects if isinstance(o, DaemonSet | Deployment)),
            key=lambda o: o.namespace not in (release.namespace, None),
            reverse=True,
        )
        workloads = {(type(o).__name__.lower(), o.name): o for o in ranked}
        for rollout in release.rollouts:
            kind, _, name = rollout.partition("/")
            workload = workloads.get((kind, name))
            namespace = workload.namespace if workload is not None and workload.namespace else release.namespace
            subject = f"{_KIND_NAMES[kind]} {namespace}/{name}"
            role = expected.backend.rollout_role(rollout)
            if workload is None:
                yield Finding(
                    ID, Severity.ERROR, subject, f"{subject}: absent", None, None, "rolled out", None,
                    f"{role}; install the release: {_install(expected, release)}",
                )  # fmt: skip
            elif workload.desired == 0 and (isinstance(workload, Deployment) or gpu_nodes):
                where = "matches no node: label the pools' nodes as node-labels.yaml says" if kind == "daemonset" else (
                    "is scaled to 0 replicas"
                )  # fmt: skip
                yield Finding(
                    ID, Severity.ERROR, subject, f"{subject}: runs nowhere ({counts_text(workload)})", None, None,
                    "rolled out", counts(workload), f"{role}; it {where}",
                )  # fmt: skip
            elif not rolled_out(workload):
                yield Finding(
                    ID, Severity.ERROR, subject, f"{subject}: not rolled out ({counts_text(workload)})", None, None,
                    "rolled out", counts(workload), f"{role}; {pods_hint(expected.cluster, workload, pods, namespace)}",
                )  # fmt: skip


def _install(expected: Expected, release: ChartRelease) -> str:
    path = Paths(rendered=expected.rendered).rendered_file(expected.cluster, release.values_file)
    return commands.shown(expected.cluster, release.install_commands(path))
