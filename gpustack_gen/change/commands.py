"""The kubectl and helm commands of rollout steps, in one place.

Every command runs from the folder ``plan`` was run in: rendered files are under ``rendered/<cluster>``
and the fleet's own paths (values files, local charts) are rebased from the fleet file's folder.
"""

from __future__ import annotations

import posixpath
import shlex
from dataclasses import dataclass

from ..compile.artifact import (
    DEVICE_PLUGIN_DAEMONSET,
    MIG_CONFIG_LABEL,
    MIG_CONFIG_STATE_LABEL,
    device_plugin_daemonsets,
)
from ..compile.dra import driver as dra_driver
from ..compile.gpu_operator.nodes import label_command, selector_text
from ..compile.operator import REPO_ADD_COMMAND, VALUES_FILE, helm_upgrade_command, patch_command
from ..compile.releases import ChartRelease
from ..model.backends.dra_gpu_config import DRIVER as DRA_DRIVER_NAME
from ..model.fleet import Cluster, HelmRelease, Pool, Workload

MIG_MANAGER_DAEMONSET = "daemonset/nvidia-mig-manager"
TOOLKIT_DAEMONSET = "daemonset/nvidia-container-toolkit-daemonset"
# Every operand's pod waits in its init containers for the validator (gpu-operator assets/state-operator-validation).
VALIDATOR_DAEMONSET = "daemonset/nvidia-operator-validator"
OPERATOR_DEPLOYMENT = "deployment/gpu-operator"
CLUSTER_POLICY = "clusterpolicies.nvidia.com/cluster-policy"
DRIVER_UPGRADE_STATE_LABEL = "nvidia.com/gpu-driver-upgrade-state"
DRIVER_VERSION_LABEL = "nvidia.com/cuda.driver-version.full"  # GFD: the version the loaded driver reports
GPU_NODES = "nvidia.com/gpu.present=true"  # GFD's label of every node with an NVIDIA GPU
# The kubelet refreshes ConfigMap volumes on its sync loop (1 min by default) plus its cache's delay.
VOLUME_SYNC_SECONDS = 120


@dataclass(frozen=True)
class Paths:
    """Where things are, seen from the folder the commands run in."""

    rendered: str = "rendered"  # the folder render wrote into (render --out)
    fleet_dir: str = "."  # the fleet file's folder

    def cluster_dir(self, cluster: Cluster) -> str:
        return posixpath.join(self.rendered, cluster.name)

    def rendered_file(self, cluster: Cluster, name: str) -> str:
        return posixpath.join(self.rendered, cluster.name, name)

    def from_fleet(self, path: str) -> str:
        """A file path the fleet file gives relative to itself (an absolute one stays as it is)."""
        if posixpath.isabs(path):
            return path
        return posixpath.normpath(posixpath.join(self.fleet_dir, path))

    def chart(self, reference: str) -> str:
        """A chart reference: a local chart (``./`` or ``../``) is rebased and keeps its ``./`` (helm would read
        ``charts/api`` as a repository and chart name when no such folder exists); others stay as they are."""
        if not reference.startswith(("./", "../")):
            return reference
        path = self.from_fleet(reference)
        return path if path.startswith(("../", "/")) else f"./{path}"


def jsonpath_key(name: str) -> str:
    """A label or resource name as a jsonpath key: dots escaped (``nvidia\\.com/gpu\\.shared``)."""
    return name.replace(".", "\\.")


def apply(cluster: Cluster, paths: Paths) -> str:
    return f"kubectl apply -k {shlex.quote(paths.cluster_dir(cluster))}"


def diff(cluster: Cluster, paths: Paths) -> str:
    return f"kubectl diff -k {shlex.quote(paths.cluster_dir(cluster))}"


def sleep_for_volume_sync() -> str:
    return f"sleep {VOLUME_SYNC_SECONDS}"


def show_device_plugin_config(cluster: Cluster, key: str) -> str:
    return (
        f"kubectl exec -n {cluster.operator.namespace} {DEVICE_PLUGIN_DAEMONSET} -c config-manager -- "
        f"cat /available-configs/{shlex.quote(key)}"
    )


def assert_mig_config(cluster: Cluster, name: str) -> str:
    return (
        f"kubectl exec -n {cluster.operator.namespace} {MIG_MANAGER_DAEMONSET} -- nvidia-mig-parted assert "
        f"--valid-config -f /mig-parted-config/config.yaml -c {shlex.quote(name)}"
    )


def patch(cluster: Cluster, paths: Paths) -> str:
    return patch_command(paths.rendered_file(cluster, "clusterpolicy-patch.yaml"))


def enable_device_plugin() -> str:
    """Turns the Operator's device plugin back on in a ClusterPolicy a DRA backend turned it off in."""
    patch = '{"spec":{"devicePlugin":{"enabled":true}}}'
    return f"kubectl patch {CLUSTER_POLICY} --type merge --patch {shlex.quote(patch)}"


def operator_update(cluster: Cluster, paths: Paths, *, new_chart_version: bool = False) -> str:
    """helm upgrade --install with the user's values and ours, its chart repository added first (the plan may
    run where nobody added it), or the ClusterPolicy patch for external installs."""
    if cluster.operator.install == "external":
        return patch(cluster, paths)
    upgrade = helm_upgrade_command(
        cluster,
        paths.rendered_file(cluster, VALUES_FILE),
        user_values=tuple(paths.from_fleet(p) for p in cluster.operator.values_files),
        new_chart_version=new_chart_version,
    )
    return f"{REPO_ADD_COMMAND} && {upgrade}"


def release_upgrade(cluster: Cluster, release: ChartRelease, paths: Paths) -> str:
    """A backend's own chart (HAMi, the DRA driver), installed or upgraded with its rendered values file, its
    repository added first (an OCI chart needs none): the command may run where nobody added it (CI, a
    colleague's machine). Adding a name again with the same URL does nothing (helm v3 ``cmd/helm/repo_add.go``),
    and the update fetches the pinned version's index."""
    return " && ".join(release.install_commands(paths.rendered_file(cluster, release.values_file)))


def release_rollout(release: ChartRelease, timeout: str = "10m") -> str:
    return " && ".join(
        f"kubectl rollout status -n {release.namespace} {resource} --timeout={timeout}" for resource in release.rollouts
    )


def restart_release(release: ChartRelease) -> str:
    return f"kubectl rollout restart -n {release.namespace} {' '.join(release.rollouts)}"


def release_gone(release: ChartRelease) -> str:
    """Lists what is left of an uninstalled release's workloads: the step needs it to print none."""
    return f"kubectl get -n {release.namespace} {' '.join(release.rollouts)} --ignore-not-found -o name"


def wait_daemonset_deleted(cluster: Cluster, daemonset: str, timeout: str = "10m") -> str:
    return f"kubectl wait --for=delete -n {cluster.operator.namespace} {daemonset} --timeout={timeout}"


def delete_configmaps(cluster: Cluster, names: list[str]) -> str:
    return f"kubectl delete configmap -n {cluster.operator.namespace} {' '.join(names)} --ignore-not-found"


def wait_cluster_policy_ready(timeout: str = "20m") -> str:
    return f"kubectl wait {CLUSTER_POLICY} --for=jsonpath='{{.status.state}}'=ready --timeout={timeout}"


def rollout_status(cluster: Cluster, *daemonsets: str, timeout: str = "20m") -> str:
    namespace = cluster.operator.namespace
    return " && ".join(f"kubectl rollout status -n {namespace} {ds} --timeout={timeout}" for ds in daemonsets)


def restart_device_plugin(cluster: Cluster, mps_daemon: bool) -> str:
    return f"kubectl rollout restart -n {cluster.operator.namespace} {' '.join(device_plugin_daemonsets(mps_daemon))}"


def device_plugin_rollout(cluster: Cluster, mps_daemon: bool) -> str:
    return rollout_status(cluster, *device_plugin_daemonsets(mps_daemon))


# Marks the nodes a plan drains, so that later steps touch only them: a node an autoscaler adds meanwhile carries
# the pool's labels but not this one (kubectl drain fixes its node list at the start, drain.go:320).
ROLLOUT_LABEL = "gpustack-gen.dev/rollout"


def _drain_words(pool: Pool) -> str:
    """The flags every GPU pod needs to be evicted: DaemonSet pods stay, emptyDir (``/dev/shm``) is deleted,
    pods without a controller only where the pool allows it (kubectl ``pkg/drain/filters.go:32-37``)."""
    force = " --force" if pool.drain.delete_pods_without_controller else ""
    return f"--ignore-daemonsets --delete-emptydir-data{force}"


def drain(pool: Pool) -> str:
    """Evicts the pods of the pool's selected nodes (a batch, when the selector names one) within the pool's
    timeout: without ``--timeout`` kubectl waits forever, retrying a PodDisruptionBudget's refusal every 5 s
    (``pkg/drain/drain.go:270-276,318-320``); with it, it exits 1 with ``global timeout reached``."""
    return (
        f"kubectl drain --selector {shlex.quote(selector_text(pool))} {_drain_words(pool)} "
        f"--timeout={pool.drain.timeout_minutes}m"
    )


def drain_preflight(pool: Pool) -> str:
    """What would block the drain, found before any node is cordoned: ``--dry-run=client`` runs the same pod
    filters and fails on a pod without a controller (``filters.go:174-244``, ``pkg/cmd/drain/drain.go:367-371``)."""
    return f"kubectl drain --selector {shlex.quote(selector_text(pool))} {_drain_words(pool)} --dry-run=client"


def show_pdbs() -> str:
    columns = "NAMESPACE:.metadata.namespace,NAME:.metadata.name,ALLOWED:.status.disruptionsAllowed"
    return f"kubectl get pdb --all-namespaces -o custom-columns={shlex.quote(columns)}"


PENDING = "pending"


def mark_pool(pool: Pool) -> str:
    """Marks the pool's nodes as this rollout finds them (``pending``): batches are taken from these only."""
    return label_command(f"{selector_text(pool)},!{ROLLOUT_LABEL}", {ROLLOUT_LABEL: PENDING})


def mark_batch(pool: Pool, batch: str, size: int) -> str:
    """Relabels the next ``size`` pending nodes of the pool as ``batch`` (a jsonpath slice of the node list; an
    empty list makes kubectl label fail: the pool has fewer nodes than the fleet says)."""
    pending = shlex.quote(f"{selector_text(pool)},{ROLLOUT_LABEL}={PENDING}")
    names = shlex.quote(f"jsonpath={{.items[0:{size}].metadata.name}}")
    return (
        f"kubectl label nodes $(kubectl get nodes --selector {pending} -o {names}) "
        f"{shlex.quote(f'{ROLLOUT_LABEL}={batch}')} --overwrite"
    )


def no_pods_left(batch: Pool, index: int) -> str:
    """Fails while a pod other than a DaemonSet's still runs on the ``index``-th node of the batch: the drain's exit
    status, not ``.spec.unschedulable`` (a node that failed to drain stays cordoned with its pods)."""
    node = shlex.quote(f"jsonpath={{.items[{index}].metadata.name}}")
    pods = shlex.quote(
        'jsonpath={range .items[?(@.metadata.ownerReferences[0].kind!="DaemonSet")]}'
        "{.metadata.namespace}/{.metadata.name} {end}"
    )
    listing = (
        f"kubectl get pods --all-namespaces --field-selector "
        f"spec.nodeName=$(kubectl get nodes --selector {shlex.quote(selector_text(batch))} -o {node}) -o {pods}"
    )
    return f'test -z "$({listing} || echo kubectl failed)"'


def unmark(pool: Pool) -> str:
    return label_command(f"{selector_text(pool)},{ROLLOUT_LABEL}", {ROLLOUT_LABEL: None})


def uncordon(pool: Pool) -> str:
    return f"kubectl uncordon --selector {shlex.quote(selector_text(pool))}"


def list_nodes(pool: Pool, *columns: str) -> str:
    extra = "".join(f" -L {column}" for column in columns)
    return f"kubectl get nodes --selector {shlex.quote(selector_text(pool))}{extra}"


def wait_nodes(node_selector: str, jsonpath: str, value: str, timeout: str) -> str:
    return (
        f"kubectl wait nodes --selector {shlex.quote(node_selector)} "
        f"--for=jsonpath='{{{jsonpath}}}'={shlex.quote(value)} --timeout={timeout}"
    )


def wait_cordoned(pool: Pool) -> str:
    return wait_nodes(selector_text(pool), ".spec.unschedulable", "true", "1m")


def wait_label(pool: Pool, label: str, value: str) -> str:
    return wait_nodes(selector_text(pool), f".metadata.labels.{jsonpath_key(label)}", value, "1m")


def wait_allocatable(pool: Pool, per_node: dict[str, int]) -> str:
    return " && ".join(
        wait_nodes(selector_text(pool), f".status.allocatable.{jsonpath_key(resource)}", str(count), "10m")
        for resource, count in sorted(per_node.items())
    )


def show_allocatable(pool: Pool, resources: list[str]) -> str:
    columns = ",".join(
        [
            "NODE:.metadata.name",
            *(f"{r.split('/')[-1].upper()}:.status.allocatable.{jsonpath_key(r)}" for r in resources),
        ]
    )
    return f"kubectl get nodes --selector {shlex.quote(selector_text(pool))} -o custom-columns={shlex.quote(columns)}"


def label_pool(pool: Pool, labels: dict[str, str | None]) -> str:
    return label_command(selector_text(pool), labels)


def relabel_mig(pool: Pool, config: str) -> str:
    """Clear the state and set the config in one update, on the pool's nodes that do not carry it yet.

    Clearing ``nvidia.com/mig.config.state`` first keeps an old ``success`` from passing for the new result;
    skipping nodes already at ``config`` keeps a re-run from clearing a state nothing would set again
    (the mig-manager acts only on a changed value).
    """
    return label_command(
        f"{selector_text(pool)},{MIG_CONFIG_LABEL}!={config}",
        {MIG_CONFIG_STATE_LABEL: None, MIG_CONFIG_LABEL: config},
    )


def wait_mig_success(pool: Pool) -> str:
    return wait_nodes(selector_text(pool), f".metadata.labels.{jsonpath_key(MIG_CONFIG_STATE_LABEL)}", "success", "30m")


# Per node: the driver pod's restart and reload, with the GPU pods' deletion (timeoutSeconds 300) before it.
DRIVER_UPGRADE_MINUTES_PER_NODE = 20
OLD_GFD_DRIVER_LABELS = ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor", "nvidia.com/cuda.driver.rev")


def driver_upgrade_timeout(nodes: int, parallel: int) -> str:
    """The controller upgrades ``parallel`` nodes at a time (0: all), so the last one may start after
    ``nodes / parallel`` rounds: ``kubectl wait`` waits on the nodes one after another under one deadline."""
    rounds = 1 if parallel == 0 else max(1, -(-nodes // parallel))
    return f"{rounds * DRIVER_UPGRADE_MINUTES_PER_NODE}m"


def wait_driver_upgraded(timeout: str) -> str:
    return wait_nodes(
        GPU_NODES, f".metadata.labels.{jsonpath_key(DRIVER_UPGRADE_STATE_LABEL)}", "upgrade-done", timeout
    )


def wait_driver_version(version: str, timeout: str, *, full_label: bool) -> str:
    """Every GPU node runs driver ``version``: GFD labels what the loaded driver reports, so unlike the upgrade
    state (``upgrade-done`` from the last upgrade) it cannot pass before this one. ``full_label``: the pinned
    GFD sets ``cuda.driver-version.full``; else its major, minor and revision labels are waited for."""
    if full_label:
        return wait_nodes(GPU_NODES, f".metadata.labels.{jsonpath_key(DRIVER_VERSION_LABEL)}", version, timeout)
    parts = version.split(".")
    return " && ".join(
        wait_nodes(GPU_NODES, f".metadata.labels.{jsonpath_key(label)}", part, timeout)
        for label, part in zip(OLD_GFD_DRIVER_LABELS, parts, strict=False)
    )


def show_driver_versions(*, full_label: bool = True) -> str:
    """Each GPU node's upgrade state and the driver GFD reports, to see every node on the new driver."""
    labels = (DRIVER_VERSION_LABEL,) if full_label else OLD_GFD_DRIVER_LABELS
    columns = "".join(f" -L {label}" for label in labels)
    return f"kubectl get nodes --selector {GPU_NODES} -L {DRIVER_UPGRADE_STATE_LABEL}{columns}"


def wait_nodes_gone(pool: Pool, *, cordoned_only: bool = False) -> str:
    """Waits until the pool's nodes are deleted; ``cordoned_only``: its drained ones, while new nodes carrying the
    same labels join (a field selector on spec.unschedulable, which the API server supports for nodes)."""
    cordoned = " --field-selector spec.unschedulable=true" if cordoned_only else ""
    return f"kubectl wait --for=delete nodes --selector {shlex.quote(selector_text(pool))}{cordoned} --timeout=60m"


def nodes_labelled(label: str, value: str) -> str:
    """Lists the nodes that still carry ``label=value``: the step needs it to print none."""
    return f"kubectl get nodes --selector {shlex.quote(f'{label}={value}')} -o name"


def no_nodes_labelled(label: str, value: str) -> str:
    """Fails while a node carries ``label=value`` (``kubectl get`` exits 0 on an empty list), and when kubectl
    itself fails (wrong context, no access), which would print nothing on stdout either."""
    return f'test -z "$({nodes_labelled(label, value)} || echo kubectl failed)"'


def helm_workload(cluster: Cluster, workload: Workload, release: HelmRelease, paths: Paths) -> str:
    """Redeploy a workload with its values and its fragment last; no --reuse-values (it would keep the old
    GPU limits beside the new ones: Helm merges maps key by key)."""
    words = [
        f"helm upgrade --install {release.release} {shlex.quote(paths.chart(release.chart))}",
        f"--namespace {workload.namespace}",
        *([f"--version {shlex.quote(release.version)}"] if release.version else []),
        *(f"--values {shlex.quote(paths.from_fleet(p))}" for p in release.values_files),
        f"--values {shlex.quote(paths.rendered_file(cluster, f'workloads/{workload.file_stem}.yaml'))}",
    ]
    return " ".join(words)


def show_workload(workload: Workload) -> str:
    return f"kubectl get pods -n {workload.namespace} --field-selector=status.phase=Pending"


# --- the NVIDIA DRA driver ------------------------------------------------------------------------------


def dra_driver_upgrade(cluster: Cluster, paths: Paths) -> str:
    return release_upgrade(cluster, dra_driver.dra_release(cluster), paths)


def dra_driver_uninstall(cluster: Cluster) -> str:
    return dra_driver.dra_release(cluster).uninstall_command()


def show_dra_driver(cluster: Cluster) -> str:
    return f"kubectl get pods -n {cluster.dra.namespace}"


def dra_plugin_rollout(cluster: Cluster) -> str:
    """Waits until the DRA kubelet plugin runs on every node labelled for it."""
    return f"kubectl rollout status -n {cluster.dra.namespace} {dra_driver.KUBELET_PLUGIN_DAEMONSET} --timeout=20m"


def restart_dra_plugin(cluster: Cluster) -> str:
    return f"kubectl rollout restart -n {cluster.dra.namespace} {dra_driver.KUBELET_PLUGIN_DAEMONSET}"


def show_resource_slices() -> str:
    """The devices each node publishes through the driver (ResourceSlice field selectors: spec.driver, spec.nodeName)."""
    columns = "NODE:.spec.nodeName,DEVICES:.spec.devices[*].name"
    return (
        f"kubectl get resourceslices --field-selector spec.driver={DRA_DRIVER_NAME} "
        f"-o custom-columns={shlex.quote(columns)}"
    )


def delete_objects(documents: list[dict[str, object]]) -> str:
    """``kubectl delete`` of these objects, one command per kind and namespace; absent ones are fine."""
    groups: dict[tuple[str, str | None], list[str]] = {}
    for document in documents:
        metadata = document["metadata"]
        assert isinstance(metadata, dict)
        namespace = metadata.get("namespace")
        groups.setdefault((str(document["kind"]).lower(), namespace), []).append(str(metadata["name"]))
    return " && ".join(
        f"kubectl delete {kind}{f' -n {namespace}' if namespace else ''} {' '.join(names)} --ignore-not-found"
        for (kind, namespace), names in groups.items()
    )
