"""The kubectl and helm commands of rollout steps, in one place, as argument lists (:mod:`gpustack_gen.shell`).

They name no cluster: the plan binds each step to its cluster's kube context (:func:`~gpustack_gen.shell.in_cluster`).

Every command runs from the folder ``plan`` was run in: rendered files are under ``rendered/<cluster>``
and the fleet's own paths (values files, local charts) are rebased from the fleet file's folder.
"""

from __future__ import annotations

from ..compile.artifact import (
    DEVICE_PLUGIN_DAEMONSET,
    DRIVER_UPGRADE_STATE_LABEL,
    MIG_CONFIG_LABEL,
    MIG_CONFIG_STATE_LABEL,
    MIG_MANAGER_DAEMONSET,
    device_plugin_daemonsets,
)
from ..compile.dra import driver as dra_driver
from ..compile.gpu_operator.nodes import label_command, selector_text
from ..compile.operator import VALUES_FILE, helm_upgrade_command, operator_repo_add, patch_command
from ..compile.releases import ChartRelease
from ..model.backends.dra_gpu_config import DRIVER as DRA_DRIVER_NAME
from ..model.fleet import Cluster, HelmRelease, Pool, Workload
from ..shell import Command, PrintsNothing, Script, all_of, command, helm, kubectl
from ..workdir import Paths

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
    upgrade = helm_upgrade_command(
        cluster,
        paths.rendered_file(cluster, VALUES_FILE),
        user_values=tuple(paths.from_fleet(p) for p in cluster.operator.values_files),
        new_chart_version=new_chart_version,
    )
    return all_of(operator_repo_add(), upgrade)


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


def restart_device_plugin(cluster: Cluster, mps_daemon: bool) -> Script:
    return kubectl("rollout", "restart", "-n", cluster.operator.namespace, *device_plugin_daemonsets(mps_daemon))


def device_plugin_rollout(cluster: Cluster, mps_daemon: bool) -> Script:
    return rollout_status(cluster, *device_plugin_daemonsets(mps_daemon))


def drain(pool: Pool) -> Script:
    return kubectl("drain", "--selector", selector_text(pool), "--ignore-daemonsets", "--delete-emptydir-data")


def uncordon(pool: Pool) -> Script:
    return kubectl("uncordon", "--selector", selector_text(pool))


def list_nodes(pool: Pool, *columns: str) -> Script:
    return kubectl("get", "nodes", "--selector", selector_text(pool), *(w for c in columns for w in ("-L", c)))


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


def wait_driver_upgraded() -> Script:
    return wait_nodes(GPU_NODES, f".metadata.labels.{jsonpath_key(DRIVER_UPGRADE_STATE_LABEL)}", "upgrade-done", "60m")


def wait_driver_version(version: str) -> Script:
    """Every GPU node runs driver ``version``: GFD labels what the loaded driver reports, so unlike the upgrade
    state (``upgrade-done`` from the last upgrade) it cannot pass before this one."""
    return wait_nodes(GPU_NODES, f".metadata.labels.{jsonpath_key(DRIVER_VERSION_LABEL)}", version, "60m")


def show_driver_versions() -> Script:
    """Each GPU node's upgrade state and the driver GFD reports, to see every node on the new driver."""
    return kubectl(
        "get", "nodes", "--selector", GPU_NODES, "-L", DRIVER_UPGRADE_STATE_LABEL, "-L", DRIVER_VERSION_LABEL
    )


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
    return kubectl("get", "pods", "-n", cluster.dra.namespace)


def dra_plugin_rollout(cluster: Cluster) -> Script:
    """Waits until the DRA kubelet plugin runs on every node labelled for it."""
    return kubectl(
        "rollout", "status", "-n", cluster.dra.namespace, dra_driver.KUBELET_PLUGIN_DAEMONSET, "--timeout=20m"
    )


def restart_dra_plugin(cluster: Cluster) -> Script:
    return kubectl("rollout", "restart", "-n", cluster.dra.namespace, dra_driver.KUBELET_PLUGIN_DAEMONSET)


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
