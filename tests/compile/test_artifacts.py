from __future__ import annotations

import dataclasses

from gpustack_gen.compile import compile_cluster
from gpustack_gen.compile.artifact import EmbeddedYaml
from gpustack_gen.compile.config_names import config_names
from gpustack_gen.compile.configmaps import mig_parted_config
from gpustack_gen.compile.node_labels import pool_labels
from gpustack_gen.compile.operator import operator_settings
from gpustack_gen.compile.workloads import workload_values


def _artifact(cluster, path):
    return next(a for a in compile_cluster(cluster) if a.path == path)


def test_file_set_without_sharing(make_cluster) -> None:
    paths = [a.path for a in compile_cluster(make_cluster())]
    assert paths == [
        "gpu-operator-values.yaml",
        "clusterpolicy-patch.yaml",
        "namespace.yaml",
        "device-plugin-config.yaml",
        "node-labels.yaml",
        "capacity.yaml",
        "kustomization.yaml",
        "workloads/ml.w1.yaml",
    ]
    # The namespace is always there, so that `kubectl apply -k .` works before the chart is installed; the
    # device-plugin ConfigMap too, so that turning sharing on later changes no ClusterPolicy setting.
    assert _artifact(make_cluster(), "kustomization.yaml").documents[0]["resources"] == [
        "namespace.yaml",
        "device-plugin-config.yaml",
    ]


def test_patch_writes_out_what_the_values_leave_to_the_chart(make_cluster) -> None:
    """A merge patch only changes what it names: an unused MIG reference is deleted with null, and the
    driver version is the chart default, so that removing a pin unpins the live ClusterPolicy too."""
    spec = _artifact(make_cluster(), "clusterpolicy-patch.yaml").documents[0]["spec"]
    assert spec["devicePlugin"] == {"config": {"name": "gpustack-device-plugin-config", "default": "any"}}
    assert spec["migManager"] == {"config": {"name": None}}
    assert spec["driver"]["version"] == "580.82.07"
    assert spec["driver"]["upgradePolicy"]["podDeletion"] == {"deleteEmptyDir": True, "force": False}
    values = _artifact(make_cluster(), "gpu-operator-values.yaml").documents[0]
    assert "migManager" not in values and "version" not in values["driver"]  # helm takes the chart defaults
    pinned = make_cluster(cluster={"operator": {"version": "v25.3.3", "driver": {"version": "570.172.08"}}})
    assert _artifact(pinned, "clusterpolicy-patch.yaml").documents[0]["spec"]["driver"]["version"] == "570.172.08"


def test_patch_of_a_version_without_a_known_driver_default_says_so(make_cluster) -> None:
    cluster = make_cluster(cluster={"operator": {"version": "v25.10.1"}})
    unknown = dataclasses.replace(cluster.operator.release, driver=None)
    cluster = dataclasses.replace(cluster, operator=dataclasses.replace(cluster.operator, release=unknown))
    patch = _artifact(cluster, "clusterpolicy-patch.yaml")
    assert "version" not in patch.documents[0]["spec"]["driver"]
    assert any("leaves the ClusterPolicy's as it is" in note for note in patch.notes)


def test_builtin_mig_config_gets_its_own_configmap(make_cluster) -> None:
    """A pool naming all-balanced must not depend on the default ConfigMap of the pinned mig-manager."""
    cluster = make_cluster(
        {"gpu": "b300", "sharing": {"strategy": "mig", "config": "all-balanced"}},
        {"mig": {"strategy": "mixed"}},
        migProfile="1g.34gb",
    )
    config = mig_parted_config(config_names(cluster))
    (entry,) = config["mig-configs"]["all-balanced"]
    assert entry["device-filter"] == ["0x318210DE"]
    assert _artifact(cluster, "gpu-operator-values.yaml").documents[0]["migManager"]["config"]["name"] == (
        "gpustack-mig-parted-config"
    )


def test_mps_configmap_header_restarts_the_mps_daemon(make_cluster) -> None:
    cluster = make_cluster({"sharing": {"strategy": "mps", "replicas": 4}})
    notes = _artifact(cluster, "device-plugin-config.yaml").notes
    assert any("daemonset/nvidia-device-plugin-mps-control-daemon" in note for note in notes)
    plain = make_cluster({"sharing": {"strategy": "time-slicing", "replicas": 4}})
    assert not any("mps-control-daemon" in note for note in _artifact(plain, "device-plugin-config.yaml").notes)


def test_values_follow_the_pinned_version(make_cluster) -> None:
    old_cluster = make_cluster(cluster={"operator": {"version": "v25.3.3", "cdi": {"enabled": True, "default": True}}})
    old = operator_settings(old_cluster)
    assert old["cdi"] == {"enabled": True, "default": True}
    unset = make_cluster(cluster={"operator": {"version": "v24.9.2"}})
    assert operator_settings(unset)["cdi"] == {"enabled": False, "default": False}
    new_cluster = make_cluster(cluster={"operator": {"version": "v26.7.0"}})
    new = operator_settings(new_cluster)
    assert new["cdi"] == {"enabled": True, "nriPluginEnabled": False}
    assert "default" not in new["cdi"]


def test_values_name_the_configmaps_and_the_default_key(make_cluster) -> None:
    cluster = make_cluster({"sharing": {"strategy": "time-slicing", "replicas": 4}})
    values = _artifact(cluster, "gpu-operator-values.yaml").documents[0]
    assert values["devicePlugin"] == {"config": {"name": "gpustack-device-plugin-config", "default": "any"}}
    assert "migManager" not in values
    patch = _artifact(cluster, "clusterpolicy-patch.yaml").documents[0]
    assert patch["spec"]["devicePlugin"] == values["devicePlugin"]


def test_mps_patch_carries_the_mps_root(make_cluster) -> None:
    cluster = make_cluster({"sharing": {"strategy": "mps", "replicas": 4}})
    patch = _artifact(cluster, "clusterpolicy-patch.yaml").documents[0]["spec"]
    assert patch["devicePlugin"]["mps"] == {"root": "/run/nvidia/mps"}
    values = _artifact(cluster, "gpu-operator-values.yaml").documents[0]
    assert "mps" not in values["devicePlugin"]  # the chart never renders it


def test_device_plugin_configmap_embeds_configs(make_cluster) -> None:
    cluster = make_cluster({"sharing": {"strategy": "time-slicing", "replicas": 4}}, {"operator": {"namespace": "gpu"}})
    (document,) = _artifact(cluster, "device-plugin-config.yaml").documents
    assert document["metadata"]["namespace"] == "gpu"
    assert all(isinstance(v, EmbeddedYaml) for v in document["data"].values())
    assert document["data"]["p1"].data["sharing"]["timeSlicing"]["resources"][0]["replicas"] == 4
    assert _artifact(cluster, "kustomization.yaml").documents[0]["resources"] == [
        "namespace.yaml",
        "device-plugin-config.yaml",
    ]
    (namespace,) = _artifact(cluster, "namespace.yaml").documents
    assert namespace["metadata"]["name"] == "gpu"


def _mig_cluster(make_cluster):
    return make_cluster(
        {"gpu": "a100-40gb", "gpusPerNode": 8, "sharing": {"strategy": "mig", "layout": {"3g.20gb": 2}}},
        {
            "mig": {"strategy": "mixed"},
            "nodePools": [
                {
                    "name": "p1",
                    "gpu": "a100-40gb",
                    "nodes": 1,
                    "gpusPerNode": 8,
                    "nodeSelector": {"pool": "p1"},
                    "sharing": {"strategy": "mig", "layout": {"3g.20gb": 2}},
                },
                {
                    "name": "p2",
                    "gpu": "h100-80gb",
                    "nodes": 1,
                    "gpusPerNode": 8,
                    "nodeSelector": {"pool": "p2"},
                    "sharing": {"strategy": "mig", "config": "all-balanced"},
                },
                {"name": "p3", "gpu": "h100-80gb", "nodes": 1, "nodeSelector": {"pool": "p3"}},
                {"name": "p4", "gpu": "l4", "nodes": 1, "nodeSelector": {"pool": "p4"}},
            ],
        },
        migProfile="3g.20gb",
    )


def test_custom_mig_config_carries_builtins_with_device_filters(make_cluster) -> None:
    cluster = _mig_cluster(make_cluster)
    config = mig_parted_config(config_names(cluster))
    assert list(config["mig-configs"]) == ["all-disabled", "all-balanced", "custom-3g.20gbx2"]
    (balanced,) = config["mig-configs"]["all-balanced"]
    assert "0x233010DE" in balanced["device-filter"]
    assert balanced["mig-devices"] == {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}
    (custom,) = config["mig-configs"]["custom-3g.20gbx2"]
    assert custom["mig-devices"] == {"3g.20gb": 2} and "0x20B010DE" in custom["device-filter"]
    values = _artifact(cluster, "gpu-operator-values.yaml").documents[0]
    assert values["migManager"] == {"config": {"name": "gpustack-mig-parted-config", "default": "all-disabled"}}


def test_node_labels_per_pool(make_cluster) -> None:
    cluster = _mig_cluster(make_cluster)
    assert pool_labels(cluster, config_names(cluster)) == {
        "p1": {"nvidia.com/device-plugin.config": "p1", "nvidia.com/mig.config": "custom-3g.20gbx2"},
        "p2": {"nvidia.com/device-plugin.config": "p2", "nvidia.com/mig.config": "all-balanced"},
        "p3": {"nvidia.com/device-plugin.config": "p3", "nvidia.com/mig.config": "all-disabled"},
        "p4": {"nvidia.com/device-plugin.config": "p4"},
    }
    entry = _artifact(cluster, "node-labels.yaml").documents[0]["pools"][0]
    assert entry["command"] == (
        "kubectl --context c1 label nodes --selector pool=p1 nvidia.com/device-plugin.config=p1 "
        "nvidia.com/mig.config=custom-3g.20gbx2 --overwrite"
    )


def test_workload_resource_names(make_cluster) -> None:
    mixed = _mig_cluster(make_cluster)
    assert workload_values(mixed, mixed.workloads[0])["resources"]["limits"] == {"nvidia.com/mig-3g.20gb": "1"}
    renamed = make_cluster({"sharing": {"strategy": "time-slicing", "replicas": 2, "renameByDefault": True}})
    assert workload_values(renamed, renamed.workloads[0])["resources"]["limits"] == {"nvidia.com/gpu.shared": "1"}
    single = make_cluster({"gpu": "a100-80gb", "sharing": {"strategy": "mig", "config": "all-1g.10gb"}})
    assert workload_values(single, single.workloads[0])["resources"]["limits"] == {"nvidia.com/gpu": "1"}


def test_workload_fragment_scheduling(make_cluster) -> None:
    cluster = make_cluster(
        {
            "taints": [
                {"key": "nvidia.com/gpu", "effect": "NoSchedule"},
                {"key": "team", "value": "ml", "effect": "NoExecute"},
            ]
        },
        gpus=1,
        cpu="500m",
        memory="2Gi",
    )
    values = workload_values(cluster, cluster.workloads[0])
    assert values["nodeSelector"] == {"pool": "p1"}
    assert values["resources"]["requests"] == {"cpu": "500m", "memory": "2Gi"}
    assert values["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "team", "operator": "Equal", "value": "ml", "effect": "NoExecute"},
    ]


def test_capacity(make_cluster) -> None:
    cluster = make_cluster({"nodes": 3, "sharing": {"strategy": "time-slicing", "replicas": 4}}, replicas=5)
    (pool,) = _artifact(cluster, "capacity.yaml").documents[0]["pools"]
    assert pool["physicalGpus"] == 3
    assert pool["perNode"] == {"nvidia.com/gpu": 4}
    assert pool["total"] == {"nvidia.com/gpu": 12}
    assert pool["requested"] == {"nvidia.com/gpu": 5}
    assert cluster.requested_by_pool() == {"p1": {"nvidia.com/gpu": 5}}
    mixed = _mig_cluster(make_cluster)
    pools = _artifact(mixed, "capacity.yaml").documents[0]["pools"]
    assert pools[0]["perNode"] == {"nvidia.com/mig-3g.20gb": 16}
    assert pools[1]["total"] == {"nvidia.com/mig-1g.10gb": 16, "nvidia.com/mig-2g.20gb": 8, "nvidia.com/mig-3g.40gb": 8}
