"""The kubectl and helm commands of rollout steps, in one place, as argument lists (:mod:`gpustack_gen.shell`).

They name no cluster: the plan binds each step to its cluster's kube context (:func:`~gpustack_gen.shell.in_cluster`).

Every command runs from the folder ``plan`` was run in: rendered files are under ``rendered/<cluster>``
and the fleet's own paths (values files, local charts) are rebased from the fleet file's folder.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..compile.artifact import (
    DEVICE_PLUGIN_DAEMONSET,
    DEVICE_PLUGIN_LABEL,
    DRIVER_UPGRADE_STATE_LABEL,
    MIG_CONFIG_LABEL,
    MIG_CONFIG_STATE_LABEL,
    MIG_MANAGER_DAEMONSET,
    device_plugin_daemonsets,
)
from ..compile.backends.dra import driver as dra_driver
from ..compile.node_labels import label_command, selector_text
from ..compile.operator import RELEASE_NAME, VALUES_FILE, helm_upgrade_command, operator_repo_add, patch_command
from ..compile.releases import ChartRelease
from ..model.backends.dra import dra_options
from ..model.backends.dra.gpu_config import DRIVER as DRA_DRIVER_NAME
from ..model.fleet import Cluster, HelmRelease, Pool, Workload
from ..shell import Command, Pipe, PrintsNothing, Script, Spliced, all_of, command, helm, kubectl
from ..workdir import Paths
from .blockers import LISTING_FAILED

# Every operand's pod waits in its init containers for the validator (gpu-operator assets/state-operator-validation).
VALIDATOR_DAEMONSET = "daemonset/nvidia-operator-validator"
OPERATOR_DEPLOYMENT = "deployment/gpu-operator"
CLUSTER_POLICY = "clusterpolicies.nvidia.com/cluster-policy"
DRIVER_VERSION_LABEL = "nvidia.com/cuda.driver-version.full"  # GFD: the version the loaded driver reports
GPU_NODES = "nvidia.com/gpu.present=true"  # GFD's label of every node with an NVIDIA GPU
# The kubelet refreshes ConfigMap volumes on its sync loop (1 min by default) plus its cache's delay.
VOLUME_SYNC_SECONDS = 120


def jsonpath_key(name: str) -> str:
    """A label or resource name as a jsonpath key: dots escaped (``nvidia\\.com/gpu\\.shared``)."""
    return name.replace(".", "\\.")


def apply(cluster: Cluster, paths: Paths) -> Script:
    return kubectl("apply", "-k", paths.cluster_dir(cluster))


def diff(cluster: Cluster, paths: Paths) -> Script:
    return kubectl("diff", "-k", paths.cluster_dir(cluster))


def sleep_for_volume_sync() -> Script:
    return command("sleep", str(VOLUME_SYNC_SECONDS))


def show_device_plugin_config(cluster: Cluster, key: str) -> Script:
    return kubectl(
        "exec", "-n", cluster.operator.namespace, DEVICE_PLUGIN_DAEMONSET, "-c", "config-manager", "--",
        "cat", f"/available-configs/{key}",
    )  # fmt: skip


def assert_mig_config(cluster: Cluster, name: str) -> Script:
    return kubectl(
        "exec", "-n", cluster.operator.namespace, MIG_MANAGER_DAEMONSET, "--", "nvidia-mig-parted", "assert",
        "--valid-config", "-f", "/mig-parted-config/config.yaml", "-c", name,
    )  # fmt: skip


def patch(cluster: Cluster, paths: Paths) -> Script:
    return patch_command(paths.rendered_file(cluster, "clusterpolicy-patch.yaml"))


def enable_device_plugin() -> Script:
    """Turns the Operator's device plugin back on in a ClusterPolicy a DRA backend turned it off in."""
    return kubectl("patch", CLUSTER_POLICY, "--type", "merge", "--patch", '{"spec":{"devicePlugin":{"enabled":true}}}')


def operator_update(cluster: Cluster, paths: Paths, *, new_chart_version: bool = False) -> Script:
    """helm upgrade --install with the user's values and ours, its chart repository added first (the plan may
    run where nobody added it), or the ClusterPolicy patch for external installs."""
    if cluster.operator.install == "external":
        return patch(cluster, paths)
    user_values = tuple(paths.from_fleet(p) for p in cluster.operator.values_files)
    rendered = paths.rendered_file(cluster, VALUES_FILE)
    upgrade = helm_upgrade_command(cluster, rendered, user_values=user_values, new_chart_version=new_chart_version)
    return all_of(values_kept(cluster, (*user_values, rendered)), operator_repo_add(), upgrade)


def values_kept(cluster: Cluster, values: tuple[str, ...]) -> Script:
    """Stops before an upgrade that would drop a value the release has (one set by hand, say ``nfd.enabled``):
    without --reuse-values Helm renders from the passed files alone (helm pkg/action/upgrade.go:585-588). With no
    release yet, helm prints nothing and the check passes."""
    live = helm("get", "values", RELEASE_NAME, "--namespace", cluster.operator.namespace, "-o", "json")
    return Pipe((live, command("gpustack-gen", "values-kept", *values)))


def release_upgrade(cluster: Cluster, release: ChartRelease, paths: Paths) -> Script:
    """A backend's own chart (HAMi, the DRA driver), installed or upgraded with its rendered values file, its
    repository added first (an OCI chart needs none): the command may run where nobody added it (CI, a
    colleague's machine). Adding a name again with the same URL does nothing (helm v3 ``cmd/helm/repo_add.go``),
    and the update fetches the pinned version's index."""
    return release.install_commands(paths.rendered_file(cluster, release.values_file))


def release_rollout(release: ChartRelease, timeout: str = "10m") -> Script:
    return all_of(
        *(
            kubectl("rollout", "status", "-n", release.namespace, resource, f"--timeout={timeout}")
            for resource in release.rollouts
        )
    )


def restart_release(release: ChartRelease) -> Script:
    return kubectl("rollout", "restart", "-n", release.namespace, *release.rollouts)


def release_gone(release: ChartRelease) -> Script:
    """Lists what is left of an uninstalled release's workloads: the step needs it to print none."""
    return kubectl("get", "-n", release.namespace, *release.rollouts, "--ignore-not-found", "-o", "name")


def wait_daemonset_deleted(cluster: Cluster, daemonset: str, timeout: str = "10m") -> Script:
    return kubectl("wait", "--for=delete", "-n", cluster.operator.namespace, daemonset, f"--timeout={timeout}")


def delete_configmaps(cluster: Cluster, names: list[str]) -> Script:
    return kubectl("delete", "configmap", "-n", cluster.operator.namespace, *names, "--ignore-not-found")


def wait_cluster_policy_ready(timeout: str = "20m") -> Script:
    return kubectl("wait", CLUSTER_POLICY, "--for=jsonpath={.status.state}=ready", f"--timeout={timeout}")


def rollout_status(cluster: Cluster, *daemonsets: str, timeout: str = "20m") -> Script:
    namespace = cluster.operator.namespace
    return all_of(*(kubectl("rollout", "status", "-n", namespace, ds, f"--timeout={timeout}") for ds in daemonsets))


def wait_template_env(cluster: Cluster, daemonset: str, name: str, value: str, timeout: str = "10m") -> Script:
    """Waits until the Operator has re-rendered ``daemonset`` with env ``name=value`` in its pod template:
    ``rollout status`` right after ``helm upgrade`` passes on the old template (generation equals
    observedGeneration, kubectl@v0.29.0 ``pkg/polymorphichelpers/rollout_status.go:107-116``). Filter
    expressions in ``kubectl wait --for=jsonpath`` need kubectl 1.28 (kubernetes/kubernetes#118748)."""
    path = f'{{.spec.template.spec.containers[*].env[?(@.name=="{name}")].value}}'
    namespace = cluster.operator.namespace
    return kubectl("wait", "-n", namespace, daemonset, f"--for=jsonpath={path}={value}", f"--timeout={timeout}")


def wait_template_configmap(cluster: Cluster, daemonset: str, configmap: str, timeout: str = "10m") -> Script:
    """Waits until the Operator has re-rendered ``daemonset`` to mount ConfigMap ``configmap``: the volume is named
    after the ConfigMap (gpu-operator@v25.3.3 ``controllers/object_controls.go:3154-3164``), so no volume of that
    name means the old template. The ClusterPolicy's ``ready`` from before the change cannot tell."""
    path = f'{{.spec.template.spec.volumes[?(@.name=="{configmap}")].configMap.name}}'
    namespace = cluster.operator.namespace
    return kubectl("wait", "-n", namespace, daemonset, f"--for=jsonpath={path}={configmap}", f"--timeout={timeout}")


def restart_device_plugin(cluster: Cluster, mps_daemon: bool) -> Script:
    return kubectl("rollout", "restart", "-n", cluster.operator.namespace, *device_plugin_daemonsets(mps_daemon))


def device_plugin_rollout(cluster: Cluster, mps_daemon: bool) -> Script:
    return rollout_status(cluster, *device_plugin_daemonsets(mps_daemon))


# Marks the nodes a plan drains, so that later steps touch only them: a node an autoscaler adds meanwhile carries
# the pool's labels but not this one (kubectl drain fixes its node list at the start, drain.go:320).
ROLLOUT_LABEL = "gpustack-gen.dev/rollout"


def _drain_flags(pool: Pool) -> tuple[str, ...]:
    """The flags every GPU pod needs to be evicted: DaemonSet pods stay, emptyDir (``/dev/shm``) is deleted,
    pods without a controller only where the pool allows it (kubectl ``pkg/drain/filters.go:32-37``)."""
    force = ("--force",) if pool.drain.delete_pods_without_controller else ()
    return ("--ignore-daemonsets", "--delete-emptydir-data", *force)


def drain(pool: Pool) -> Script:
    """Evicts the pods of the pool's selected nodes (a batch, when the selector names one) within the pool's
    timeout: without ``--timeout`` kubectl waits forever, retrying a PodDisruptionBudget's refusal every 5 s
    (``pkg/drain/drain.go:270-276,318-320``); with it, it exits 1 with ``global timeout reached``."""
    return kubectl(
        "drain", "--selector", selector_text(pool), *_drain_flags(pool), f"--timeout={pool.drain.timeout_minutes}m"
    )


def drain_node(pool: Pool, node: str) -> Script:
    """:func:`drain` of one node (``node`` may be a placeholder the user fills in), with the pool's flags and timeout."""
    return kubectl("drain", node, *_drain_flags(pool), f"--timeout={pool.drain.timeout_minutes}m")


def drain_preflight(pool: Pool) -> Script:
    """What would block the drain, found before any node is cordoned: ``--dry-run=client`` runs the same pod
    filters and fails on a pod without a controller (``filters.go:174-244``, ``pkg/cmd/drain/drain.go:367-371``)."""
    return kubectl("drain", "--selector", selector_text(pool), *_drain_flags(pool), "--dry-run=client")


def _blockers(node_selector: str, *checks: str) -> Script:
    """Fails while something on the selected nodes would stop the step after it: the cluster's listing, read by
    ``gpustack-gen blockers`` (:mod:`gpustack_gen.change.blockers`), which exits 1 naming each blocker."""
    listing = kubectl("get", "nodes,pods,pdb", "--all-namespaces", "-o", "json")
    return Pipe((listing, command("gpustack-gen", "blockers", "--selector", node_selector, *checks)), LISTING_FAILED)


def budgets_allow_drain(pool: Pool, *, whole_pool: bool) -> Script:
    """Fails while a PodDisruptionBudget would hold the pool's drain (``whole_pool``: every node at once)."""
    return _blockers(selector_text(pool), "--budgets", "whole-pool" if whole_pool else "batch")


def no_bare_gpu_pods() -> Script:
    """Fails while a GPU pod without a controller runs on a GPU node: the driver upgrade cannot delete it."""
    return _blockers(GPU_NODES, "--bare-pods")


def show_pod_controllers() -> Script:
    """Every pod with its node and controller kind (``<none>``: a bare pod)."""
    columns = (
        "NAMESPACE:.metadata.namespace,NAME:.metadata.name,NODE:.spec.nodeName,"
        "CONTROLLER:.metadata.ownerReferences[0].kind"
    )
    return kubectl("get", "pods", "--all-namespaces", "-o", f"custom-columns={columns}")


def show_pdbs() -> Script:
    columns = "NAMESPACE:.metadata.namespace,NAME:.metadata.name,ALLOWED:.status.disruptionsAllowed"
    return kubectl("get", "pdb", "--all-namespaces", "-o", f"custom-columns={columns}")


PENDING = "pending"


def mark_pool(pool: Pool) -> Script:
    """Marks the pool's nodes as this rollout finds them (``pending``): batches are taken from these only."""
    return label_command(f"{selector_text(pool)},!{ROLLOUT_LABEL}", {ROLLOUT_LABEL: PENDING})


def _node_names(selector: str, items: str) -> Command:
    """The names of the nodes ``selector`` matches, ``items`` a jsonpath index or slice of the list."""
    return kubectl("get", "nodes", "--selector", selector, "-o", f"jsonpath={{.items[{items}].metadata.name}}")


def mark_batch(pool: Pool, batch: str, size: int) -> Script:
    """Relabels the next ``size`` pending nodes of the pool as ``batch`` (a jsonpath slice of the node list; an
    empty list makes kubectl label fail: the pool has fewer nodes than the fleet says)."""
    pending = _node_names(f"{selector_text(pool)},{ROLLOUT_LABEL}={PENDING}", f"0:{size}")
    return Spliced(kubectl("label", "nodes", f"{ROLLOUT_LABEL}={batch}", "--overwrite"), 3, pending)


def no_pods_left(batch: Pool, index: int) -> Script:
    """Fails while a pod other than a DaemonSet's still runs on the ``index``-th node of the batch: the drain's exit
    status, not ``.spec.unschedulable`` (a node that failed to drain stays cordoned with its pods)."""
    pods = (
        'jsonpath={range .items[?(@.metadata.ownerReferences[0].kind!="DaemonSet")]}'
        "{.metadata.namespace}/{.metadata.name} {end}"
    )
    listing = kubectl("get", "pods", "--all-namespaces", "--field-selector", "-o", pods)
    return PrintsNothing(Spliced(listing, 5, _node_names(selector_text(batch), str(index)), "spec.nodeName="))


def unmark(pool: Pool) -> Script:
    return label_command(f"{selector_text(pool)},{ROLLOUT_LABEL}", {ROLLOUT_LABEL: None})


def uncordon(pool: Pool) -> Script:
    return kubectl("uncordon", "--selector", selector_text(pool))


def list_nodes(pool: Pool, *columns: str) -> Script:
    return kubectl("get", "nodes", "--selector", selector_text(pool), *(w for c in columns for w in ("-L", c)))


def wait_template_labels(resource: str, name: str, labels: Mapping[str, str]) -> Script:
    """Fails until the node-group object's template carries every label (a NodePool is cluster-scoped, a
    MachineDeployment is not: it is found by name in every namespace; none found fails too)."""
    return all_of(
        *(
            kubectl(
                "wait",
                resource,
                "--all-namespaces",
                f"--field-selector=metadata.name={name}",
                f"--for=jsonpath={{.spec.template.metadata.labels.{jsonpath_key(label)}}}={value}",
                "--timeout=1m",
            )
            for label, value in labels.items()
        )
    )


def wait_nodes(node_selector: str, jsonpath: str, value: str, timeout: str) -> Script:
    return kubectl(
        "wait", "nodes", "--selector", node_selector, f"--for=jsonpath={{{jsonpath}}}={value}", f"--timeout={timeout}"
    )


def wait_cordoned(pool: Pool) -> Script:
    return wait_nodes(selector_text(pool), ".spec.unschedulable", "true", "1m")


def wait_label(pool: Pool, label: str, value: str) -> Script:
    return wait_nodes(selector_text(pool), f".metadata.labels.{jsonpath_key(label)}", value, "1m")


def wait_allocatable(pool: Pool, per_node: dict[str, int]) -> Script:
    return all_of(
        *(
            wait_nodes(selector_text(pool), f".status.allocatable.{jsonpath_key(resource)}", str(count), "10m")
            for resource, count in sorted(per_node.items())
        )
    )


def show_allocatable(pool: Pool, resources: list[str]) -> Script:
    columns = ",".join(
        [
            "NODE:.metadata.name",
            *(f"{r.split('/')[-1].upper()}:.status.allocatable.{jsonpath_key(r)}" for r in resources),
        ]
    )
    return kubectl("get", "nodes", "--selector", selector_text(pool), "-o", f"custom-columns={columns}")


def label_pool(pool: Pool, labels: dict[str, str | None]) -> Script:
    return label_command(selector_text(pool), labels)


def relabel_mig(pool: Pool, config: str) -> Script:
    """Clear the state and set the config in one update, on the pool's nodes that do not carry it yet.

    Clearing ``nvidia.com/mig.config.state`` first keeps an old ``success`` from passing for the new result;
    skipping nodes already at ``config`` keeps a re-run from clearing a state nothing would set again
    (the mig-manager acts only on a changed value).
    """
    return label_command(
        f"{selector_text(pool)},{MIG_CONFIG_LABEL}!={config}",
        {MIG_CONFIG_STATE_LABEL: None, MIG_CONFIG_LABEL: config},
    )


def wait_mig_success(pool: Pool) -> Script:
    return wait_nodes(selector_text(pool), f".metadata.labels.{jsonpath_key(MIG_CONFIG_STATE_LABEL)}", "success", "30m")


# Per node: the driver pod's restart and reload, with the GPU pods' deletion (timeoutSeconds 300) before it.
DRIVER_UPGRADE_MINUTES_PER_NODE = 20
OLD_GFD_DRIVER_LABELS = ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor", "nvidia.com/cuda.driver.rev")


def driver_upgrade_timeout(nodes: int, parallel: int) -> str:
    """The controller upgrades ``parallel`` nodes at a time (0: all), so the last one may start after
    ``nodes / parallel`` rounds: ``kubectl wait`` waits on the nodes one after another under one deadline."""
    rounds = 1 if parallel == 0 else max(1, -(-nodes // parallel))
    return f"{rounds * DRIVER_UPGRADE_MINUTES_PER_NODE}m"


def wait_driver_upgraded(timeout: str) -> Script:
    return wait_nodes(
        GPU_NODES, f".metadata.labels.{jsonpath_key(DRIVER_UPGRADE_STATE_LABEL)}", "upgrade-done", timeout
    )


def wait_driver_version(version: str, timeout: str, *, full_label: bool) -> Script:
    """Every GPU node runs driver ``version``: GFD labels what the loaded driver reports, so unlike the upgrade
    state (``upgrade-done`` from the last upgrade) it cannot pass before this one. ``full_label``: the pinned
    GFD sets ``cuda.driver-version.full``; else its major, minor and revision labels are waited for."""
    if full_label:
        return wait_nodes(GPU_NODES, f".metadata.labels.{jsonpath_key(DRIVER_VERSION_LABEL)}", version, timeout)
    parts = version.split(".")
    return all_of(
        *(
            wait_nodes(GPU_NODES, f".metadata.labels.{jsonpath_key(label)}", part, timeout)
            for label, part in zip(OLD_GFD_DRIVER_LABELS, parts, strict=False)
        )
    )


def show_driver_versions(*, full_label: bool = True) -> Script:
    """Each GPU node's upgrade state and the driver GFD reports, to see every node on the new driver."""
    labels = (DRIVER_VERSION_LABEL,) if full_label else OLD_GFD_DRIVER_LABELS
    columns = (word for label in (DRIVER_UPGRADE_STATE_LABEL, *labels) for word in ("-L", label))
    return kubectl("get", "nodes", "--selector", GPU_NODES, *columns)


def wait_nodes_gone(pool: Pool, *, cordoned_only: bool = False) -> Script:
    """Waits until the pool's nodes are deleted; ``cordoned_only``: its drained ones, while new nodes carrying the
    same labels join (a field selector on spec.unschedulable, which the API server supports for nodes)."""
    cordoned = ("--field-selector", "spec.unschedulable=true") if cordoned_only else ()
    return kubectl("wait", "--for=delete", "nodes", "--selector", selector_text(pool), *cordoned, "--timeout=60m")


def nodes_labelled(label: str, value: str) -> Command:
    """Lists the nodes that still carry ``label=value``: the step needs it to print none."""
    return kubectl("get", "nodes", "--selector", f"{label}={value}", "-o", "name")


def no_nodes_labelled(label: str, value: str) -> Script:
    """Fails while a node carries ``label=value`` (``kubectl get`` exits 0 on an empty list), and when kubectl
    itself fails (wrong context, no access), which would print nothing on stdout either."""
    return PrintsNothing(nodes_labelled(label, value))


def every_gpu_node_labelled() -> Script:
    """Fails while a GPU node has no device-plugin config label (and when kubectl fails)."""
    return PrintsNothing(kubectl("get", "nodes", "--selector", f"{GPU_NODES},!{DEVICE_PLUGIN_LABEL}", "-o", "name"))


def pool_nodes_labelled(pool: Pool) -> Script:
    """Fails while a node of the pool has no device-plugin config label (and when kubectl fails)."""
    return PrintsNothing(
        kubectl("get", "nodes", "--selector", f"{selector_text(pool)},!{DEVICE_PLUGIN_LABEL}", "-o", "name")
    )


def gpu_node_labels() -> Script:
    """Every GPU node with its device-plugin config label (empty: the node gets the key ``any``)."""
    return kubectl("get", "nodes", "--selector", GPU_NODES, "-L", DEVICE_PLUGIN_LABEL)


def helm_workload(cluster: Cluster, workload: Workload, release: HelmRelease, paths: Paths) -> Script:
    """Redeploy a workload with its values and its fragment last; no --reuse-values (it would keep the old
    GPU limits beside the new ones: Helm merges maps key by key)."""
    return helm(
        "upgrade", "--install", release.release, paths.chart(release.chart),
        "--namespace", workload.namespace,
        *(("--version", release.version) if release.version else ()),
        *(w for p in release.values_files for w in ("--values", paths.from_fleet(p))),
        "--values", paths.rendered_file(cluster, f"workloads/{workload.file_stem}.yaml"),
    )  # fmt: skip


def show_workload(workload: Workload) -> Script:
    return kubectl("get", "pods", "-n", workload.namespace, "--field-selector=status.phase=Pending")


# --- the NVIDIA DRA driver ------------------------------------------------------------------------------


def dra_driver_upgrade(cluster: Cluster, paths: Paths) -> Script:
    return release_upgrade(cluster, dra_driver.dra_release(cluster), paths)


def dra_driver_uninstall(cluster: Cluster) -> Script:
    return dra_driver.dra_release(cluster).uninstall_command()


def show_dra_driver(cluster: Cluster) -> Script:
    return kubectl("get", "pods", "-n", dra_options(cluster).namespace)


def dra_plugin_rollout(cluster: Cluster) -> Script:
    """Waits until the DRA kubelet plugin runs on every node labelled for it."""
    return kubectl(
        "rollout", "status", "-n", dra_options(cluster).namespace, dra_driver.KUBELET_PLUGIN_DAEMONSET, "--timeout=20m"
    )


def restart_dra_plugin(cluster: Cluster) -> Script:
    return kubectl("rollout", "restart", "-n", dra_options(cluster).namespace, dra_driver.KUBELET_PLUGIN_DAEMONSET)


def show_resource_slices() -> Script:
    """The devices each node publishes through the driver (ResourceSlice field selectors: spec.driver, spec.nodeName)."""
    return kubectl(
        "get", "resourceslices", "--field-selector", f"spec.driver={DRA_DRIVER_NAME}",
        "-o", "custom-columns=NODE:.spec.nodeName,DEVICES:.spec.devices[*].name",
    )  # fmt: skip


def delete_objects(documents: list[dict[str, object]]) -> Script:
    """``kubectl delete`` of these objects, one command per kind and namespace; absent ones are fine."""
    groups: dict[tuple[str, str | None], list[str]] = {}
    for document in documents:
        metadata = document["metadata"]
        assert isinstance(metadata, dict)
        namespace = metadata.get("namespace")
        groups.setdefault((str(document["kind"]).lower(), namespace), []).append(str(metadata["name"]))
    return all_of(
        *(
            kubectl("delete", kind, *(("-n", namespace) if namespace else ()), *names, "--ignore-not-found")
            for (kind, namespace), names in groups.items()
        )
    )


def show_device_classes() -> Script:
    return kubectl("get", "deviceclasses")


def show_namespaces(names: list[str]) -> Script:
    return kubectl("get", "namespaces", *names)


def show_configmaps(cluster: Cluster) -> Script:
    return kubectl("get", "configmaps", "-n", cluster.operator.namespace)


def claim_reserved_for(namespace: str, claim: str) -> Script:
    """The pods that reserve a ResourceClaim: none once its last pod ended."""
    return kubectl("get", "resourceclaim", "-n", namespace, claim, "-o", "jsonpath={.status.reservedFor}")


def label_unlabelled_nodes(label: str, value: str) -> Script:
    """Every node without ``label`` gets ``label=value`` (one that has it keeps its value)."""
    return kubectl("label", "nodes", "--selector", f"!{label}", f"{label}={value}")


def every_node_labelled(label: str) -> Script:
    """Fails while a node lacks ``label``."""
    return PrintsNothing(kubectl("get", "nodes", "--selector", f"!{label}", "-o", "name"))


def release_pods_on(batch: Pool, index: int, chart: str, release: str) -> Script:
    """Fails while a pod of Helm release ``release`` of ``chart`` is still on the ``index``-th node of the batch."""
    selector = f"app.kubernetes.io/name={chart},app.kubernetes.io/instance={release}"
    listing = kubectl("get", "pods", "--all-namespaces", "--selector", selector, "--field-selector", "-o", "name")
    return PrintsNothing(Spliced(listing, 7, _node_names(selector_text(batch), str(index)), "spec.nodeName="))


def release_pods_left(chart: str, release: str) -> Script:
    """Fails while a pod of Helm release ``release`` of ``chart`` runs anywhere (the chart's pod labels,
    app.kubernetes.io/name and instance)."""
    selector = f"app.kubernetes.io/name={chart},app.kubernetes.io/instance={release}"
    return PrintsNothing(kubectl("get", "pods", "--all-namespaces", "--selector", selector, "-o", "name"))


# Where the rendered affinity puts a node affinity term's second expression (compile/backends/device_plugin/values.py).
SECOND_EXPRESSION_KEY = (
    "{.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    ".nodeSelectorTerms[0].matchExpressions[1].key}"
)


def wait_second_affinity_key(namespace: str, daemonset: str, key: str) -> Script:
    """Passes once the DaemonSet's first node affinity term has ``key`` as its second expression."""
    return kubectl(
        "wait",
        "-n",
        namespace,
        f"daemonset/{daemonset}",
        f"--for=jsonpath={SECOND_EXPRESSION_KEY}={key}",
        "--timeout=10s",
    )
