"""One test per impact rule: a fleet that changes one thing, and the exact summary expected."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from helpers import base, changed, diff, fleet, pool, prod

from gpustack_gen.diff import Level, diff_fleets

RESTART_PLUGIN = "kubectl rollout restart -n gpu-operator daemonset/nvidia-device-plugin-daemonset"
RESTART_MPS = "kubectl rollout restart -n gpu-operator daemonset/nvidia-device-plugin-mps-control-daemon"
HELM = (
    "helm upgrade --install gpu-operator nvidia/gpu-operator --namespace gpu-operator --create-namespace "
    "--version {version} --values prod/gpu-operator-values.yaml"
)
LABEL_TEMPLATE = "set the labels in each node group's template so new nodes get them"


def rules(result: Any) -> list[tuple[str, str]]:
    return [(f.rule, f.level.value) for _, f in result.findings]


def test_replicas_change_restarts_the_device_plugin_and_relabels() -> None:
    result = diff(base(), changed(lambda d: pool(d, "t4")["sharing"].update(replicas=5)))

    assert result.summary() == [
        "prod: capacity t4: nvidia.com/gpu 12 -> 15 (workloads ask 6)",
        "prod: [restart] device-plugin config changes for pool t4 (time-slicing-4 -> time-slicing-5): "
        "restart the device plugin after applying the ConfigMap (it does not reload it)",
        "prod: [none] node groups to update: t4 (nvidia.com/device-plugin.config time-slicing-4 -> time-slicing-5); "
        + LABEL_TEMPLATE,
    ]
    plugin = result.clusters[0].findings[0]
    assert plugin.commands == ("kubectl apply -k prod/", RESTART_PLUGIN)
    assert plugin.items == ("t4",)
    assert result.level is Level.RESTART


def _without_mig(data: dict[str, Any]) -> None:
    prod(data)["nodePools"].pop(1)
    prod(data)["workloads"].pop(1)
    prod(data)["mig"]["strategy"] = "single"  # the device plugin refuses MPS under mixed


def test_strategy_change_to_mps_restarts_the_mps_control_daemon_too() -> None:
    old = changed(_without_mig)
    new = changed(lambda d: (_without_mig(d), pool(d, "t4")["sharing"].update(strategy="mps")))

    result = diff(old, new)

    assert result.summary() == [
        "prod: [restart] device-plugin config changes for pool t4 (time-slicing-4 -> mps-4): restart the device "
        "plugin and the MPS control daemon after applying the ConfigMap (it does not reload it)",
        "prod: [none] node groups to update: t4 (nvidia.com/device-plugin.config time-slicing-4 -> mps-4); "
        + LABEL_TEMPLATE,
    ]
    assert result.clusters[0].findings[0].commands == ("kubectl apply -k prod/", RESTART_PLUGIN, RESTART_MPS)


def test_mig_layout_change_is_disruptive_and_drains_first() -> None:
    new = changed(lambda d: pool(d, "a100")["sharing"].update(layout={"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 1}))

    result = diff(base(), new)

    assert result.summary() == [
        "prod: capacity a100: nvidia.com/mig-1g.5gb 32 -> 16 (workloads ask 4)",
        "prod: [disruptive] pool a100: MIG layout changes (custom-3g.20gb-2g.10gb-1g.5gbx2: 3g.20gb, 2g.10gb, "
        "1g.5gb x2 -> custom-3g.20gb-2g.10gb-1g.5gb: 3g.20gb, 2g.10gb, 1g.5gb): the 16 GPUs of its 2 nodes are "
        "repartitioned and GPU pods on them are stopped; drain first",
        "prod: [none] node groups to update: a100 (nvidia.com/mig.config custom-3g.20gb-2g.10gb-1g.5gbx2 -> "
        "custom-3g.20gb-2g.10gb-1g.5gb); " + LABEL_TEMPLATE,
    ]
    assert result.clusters[0].findings[0].commands == (
        "kubectl drain --selector pool=a100 --ignore-daemonsets --delete-emptydir-data",
        "kubectl label nodes --selector pool=a100 nvidia.com/mig.config=custom-3g.20gb-2g.10gb-1g.5gb --overwrite",
        "kubectl get nodes --selector pool=a100 -L nvidia.com/mig.config.state",
        "kubectl uncordon --selector pool=a100",
    )


def test_builtin_mig_config_name_change_is_disruptive() -> None:
    def builtin(name: str) -> dict[str, Any]:
        data = base()
        pool(data, "a100")["sharing"] = {"strategy": "mig", "config": name}
        prod(data)["workloads"].pop(1)
        return data

    result = diff(builtin("all-1g.5gb"), builtin("all-balanced"))

    assert ("mig-layout", "disruptive") in rules(result)
    assert result.level is Level.DISRUPTIVE


def test_cdi_change_reconfigures_the_runtime_on_every_gpu_node() -> None:
    result = diff(base(), changed(lambda d: d["defaults"]["operator"]["cdi"].update(enabled=False, default=False)))

    assert result.summary() == [
        "prod: [restart] container runtime settings change (cdi.enabled true -> false; cdi.default true -> false): "
        "the toolkit reconfigures and restarts the container runtime on every GPU node (5 GPU nodes in pools t4, a100)",
    ]
    assert result.clusters[0].findings[0].commands == (
        HELM.format(version="v25.3.3"),
        "kubectl rollout status -n gpu-operator daemonset/nvidia-container-toolkit-daemonset",
    )


def test_toolkit_and_runtime_changes_use_the_same_rule() -> None:
    result = diff(
        base(),
        changed(
            lambda d: (
                d["defaults"]["operator"]["toolkit"].update(enabled=False),
                prod(d).update(containerRuntime="cri-o"),
            )
        ),
    )

    assert rules(result) == [("runtime", "restart")]
    assert "containerRuntime containerd -> cri-o; toolkit.enabled true -> false" in result.findings[0][1].message


def test_driver_version_change_rolls_the_driver_and_drains() -> None:
    result = diff(base(), changed(lambda d: d["defaults"]["operator"]["driver"].update(version="580.82.07")))

    assert result.summary() == [
        "prod: [disruptive] driver changes (driver.version chart default -> 580.82.07): the driver pods roll and "
        "each GPU node is cordoned and drained as the upgrade policy (driver.upgradePolicy) says; its GPU pods stop",
    ]
    assert result.clusters[0].findings[0].commands == (
        HELM.format(version="v25.3.3"),
        "kubectl get nodes -L nvidia.com/gpu-driver-upgrade-state",
    )


def test_driver_disabled_is_disruptive() -> None:
    result = diff(base(), changed(lambda d: d["defaults"]["operator"]["driver"].update(enabled=False)))

    assert rules(result) == [("driver", "disruptive")]
    assert "driver.enabled true -> false" in result.findings[0][1].message


def test_operator_version_change_rolls_operands_and_the_default_driver() -> None:
    result = diff(base(), changed(lambda d: d["defaults"]["operator"].update(version="v25.3.4")))

    assert result.summary() == [
        "prod: [disruptive] driver changes (driver.version: chart default of v25.3.3 -> chart default of v25.3.4): "
        "the driver pods roll and each GPU node is cordoned and drained as the upgrade policy "
        "(driver.upgradePolicy) says; its GPU pods stop",
        "prod: [restart] GPU Operator changes (v25.3.3 -> v25.3.4): its operand DaemonSets roll on every GPU node",
    ]


def test_rename_by_default_lists_the_workloads_asking_the_old_name() -> None:
    result = diff(base(), changed(lambda d: pool(d, "t4")["sharing"].update(renameByDefault=True)))

    assert result.summary() == [
        "prod: capacity t4: nvidia.com/gpu 12 -> 0 (workloads ask 6 -> 0)",
        "prod: capacity t4: nvidia.com/gpu.shared 0 -> 12 (workloads ask 0 -> 6)",
        "prod: [disruptive] pool t4 stops advertising nvidia.com/gpu (now nvidia.com/gpu.shared): pods asking the "
        "old name will not schedule until redeployed with their new values fragment: ml/api",
        "prod: [restart] device-plugin config changes for pool t4 (time-slicing-4 -> time-slicing-4-renamed): "
        "restart the device plugin after applying the ConfigMap (it does not reload it)",
        "prod: [restart] values fragments change for ml/api: merging them into the services' chart values rolls "
        "their pods",
        "prod: [none] node groups to update: t4 (nvidia.com/device-plugin.config time-slicing-4 -> "
        "time-slicing-4-renamed); " + LABEL_TEMPLATE,
    ]
    rename = result.clusters[0].findings[0]
    assert rename.rule == "rename"
    assert rename.items == ("ml/api",)


def test_mig_strategy_change_renames_resources() -> None:
    def single(data: dict[str, Any]) -> None:
        pool(data, "a100")["sharing"] = {"strategy": "mig", "config": "all-1g.5gb"}
        prod(data)["workloads"][1].pop("migProfile")
        prod(data)["mig"]["strategy"] = "single"

    def mixed(data: dict[str, Any]) -> None:
        single(data)
        prod(data)["mig"]["strategy"] = "mixed"

    result = diff(changed(single), changed(mixed))

    assert result.summary()[:3] == [
        "prod: capacity a100: nvidia.com/gpu 112 -> 0 (workloads ask 4 -> 0)",
        "prod: capacity a100: nvidia.com/mig-1g.5gb 0 -> 112 (workloads ask 0 -> 4)",
        "prod: [disruptive] pool a100 stops advertising nvidia.com/gpu (now nvidia.com/mig-1g.5gb): pods asking "
        "the old name will not schedule until redeployed with their new values fragment: research/notebook",
    ]
    assert ("device-plugin-config", "restart") in rules(result)


def test_node_selector_change_lists_the_node_group() -> None:
    result = diff(base(), changed(lambda d: pool(d, "t4").update(nodeSelector={"pool": "t4-v2"})))

    assert result.summary() == [
        "prod: [restart] values fragments change for ml/api: merging them into the services' chart values rolls "
        "their pods",
        "prod: [none] node groups to update: t4 (selector pool=t4 -> pool=t4-v2); " + LABEL_TEMPLATE,
    ]
    labels = result.clusters[0].findings[1]
    assert labels.items == ("t4",)
    assert labels.commands == (
        "kubectl label nodes --selector pool=t4-v2 nvidia.com/device-plugin.config=time-slicing-4 --overwrite",
    )


def test_label_removed_is_unset_on_the_nodes() -> None:
    # t4 stops sharing: the cluster no longer needs the device-plugin ConfigMap nor its label.
    def unshared(data: dict[str, Any]) -> None:
        pool(data, "t4").update(sharing={"strategy": "none"})
        prod(data)["workloads"][0].update(replicas=3)

    result = diff(base(), changed(unshared))

    labels = next(f for _, f in result.findings if f.rule == "node-labels")
    assert "nvidia.com/device-plugin.config time-slicing-4 -> unset" in labels.message
    assert "kubectl label nodes --selector pool=t4 nvidia.com/device-plugin.config- --overwrite" in labels.commands


def test_pool_removed_is_disruptive() -> None:
    result = diff(base(), changed(lambda d: (prod(d)["nodePools"].pop(1), prod(d)["workloads"].pop(1))))

    assert result.summary() == [
        "prod: capacity a100: nvidia.com/mig-1g.5gb 32 -> 0 (workloads ask 4 -> 0)",
        "prod: capacity a100: nvidia.com/mig-2g.10gb 16 -> 0",
        "prod: capacity a100: nvidia.com/mig-3g.20gb 16 -> 0",
        "prod: [disruptive] pool a100 removed: its 2 nodes (16 a100-40gb GPUs) leave the fleet; drain them before "
        "removing the node group",
    ]
    files = {f.path: f.status.value for f in result.clusters[0].files}
    assert files["workloads/research.notebook.yaml"] == "removed"
    assert files["mig-parted-config.yaml"] == "removed"


def test_pool_added_asks_for_a_node_group() -> None:
    def add(data: dict[str, Any]) -> None:
        prod(data)["nodePools"].append(
            {"name": "h100", "gpu": "h100-80gb", "nodes": 1, "gpusPerNode": 8, "nodeSelector": {"pool": "h100"}}
        )

    result = diff(base(), changed(add))

    assert result.summary() == [
        "prod: capacity h100: nvidia.com/gpu 0 -> 8",
        "prod: [none] pool h100 added (1 x 8 h100-80gb): create its node group with the selector labels pool=h100 "
        "and the NVIDIA labels",
    ]
    assert result.clusters[0].findings[0].commands == (
        "kubectl label nodes --selector pool=h100 nvidia.com/device-plugin.config=whole-gpu "
        "nvidia.com/mig.config=all-disabled --overwrite",
    )


def test_cluster_added() -> None:
    result = diff(base(), changed(lambda d: d["clusters"].append({**copy.deepcopy(d["clusters"][0]), "name": "stage"})))

    assert result.summary() == [
        "stage: capacity a100: nvidia.com/mig-1g.5gb 0 -> 32 (workloads ask 0 -> 4)",
        "stage: capacity a100: nvidia.com/mig-2g.10gb 0 -> 16",
        "stage: capacity a100: nvidia.com/mig-3g.20gb 0 -> 16",
        "stage: capacity t4: nvidia.com/gpu 0 -> 12 (workloads ask 0 -> 6)",
        "stage: [none] cluster stage joins the fleet: apply its ConfigMaps, install the GPU Operator v25.3.3 and "
        "label its node groups",
    ]
    cluster = result.clusters[0]
    assert cluster.status.value == "added"
    assert all(f.status.value == "added" for f in cluster.files)
    assert cluster.findings[0].commands == (
        "kubectl apply -k stage/",
        HELM.format(version="v25.3.3").replace("prod/", "stage/"),
    )


def test_cluster_removed() -> None:
    two = changed(lambda d: d["clusters"].append({**copy.deepcopy(d["clusters"][0]), "name": "stage"}))

    result = diff(two, base())

    assert result.summary()[-1] == (
        "stage: [none] cluster stage leaves the fleet: gpustack-gen stops rendering it; nothing is uninstalled"
    )
    assert result.clusters[0].status.value == "removed"


def test_capacity_below_what_workloads_ask_is_an_error() -> None:
    # load_fleet refuses such a fleet; a Fleet built by other means (or a future check) still gets the finding.
    old = fleet(base())
    cluster = old.clusters[0]
    t4 = dataclasses.replace(cluster.pools[0], nodes=1)
    short = dataclasses.replace(old, clusters=(dataclasses.replace(cluster, pools=(t4, cluster.pools[1])),))

    result = diff_fleets(old, short)

    assert result.summary() == [
        "prod: capacity t4: nvidia.com/gpu 12 -> 4 (workloads ask 6)",
        "prod: [error] pool t4: workloads ask for 6 nvidia.com/gpu but the pool advertises 4",
    ]
    assert result.findings[0][1].items == ("ml/api",)
    assert result.level is Level.ERROR


def test_workload_replicas_change_shows_capacity_asked_only() -> None:
    result = diff(base(), changed(lambda d: prod(d)["workloads"][0].update(replicas=8)))

    assert result.summary() == ["prod: capacity t4: nvidia.com/gpu 12 -> 12 (workloads ask 6 -> 8)"]
    assert [f.path for f in result.clusters[0].files] == ["capacity.yaml"]
