"""Device-plugin keys and MIG config names: stable per pool, content-named for MIG."""

from __future__ import annotations

import pytest

from gpustack_gen import FleetError
from gpustack_gen.compile.config_names import config_names, mig_layout_name

WHOLE = {"version": "v1", "flags": {"migStrategy": "single"}}


def test_every_pool_has_its_own_key_and_any_covers_unlabelled_nodes(make_cluster) -> None:
    names = config_names(make_cluster())
    assert names.device_plugin_keys == {"p1": "p1"}
    assert names.device_plugin_configs == {"any": WHOLE, "p1": WHOLE}
    assert names.default_from == "p1"


def test_time_slicing_key_and_config(make_cluster) -> None:
    names = config_names(make_cluster({"sharing": {"strategy": "time-slicing", "replicas": 4}}))
    assert list(names.device_plugin_configs) == ["any", "p1"]
    assert names.device_plugin_configs["p1"]["sharing"] == {
        "timeSlicing": {
            "renameByDefault": False,
            "failRequestsGreaterThanOne": False,
            "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
        }
    }
    # One pool kind: unlabelled nodes get the same config, so the cluster works without labels.
    assert names.device_plugin_configs["any"] == names.device_plugin_configs["p1"]


@pytest.mark.parametrize(
    "sharing",
    [
        {"strategy": "time-slicing", "replicas": 5},
        {"strategy": "time-slicing", "replicas": 4, "renameByDefault": True},
        {"strategy": "time-slicing", "replicas": 4, "failRequestsGreaterThanOne": True},
        {"strategy": "mps", "replicas": 4},
        {"strategy": "none"},
    ],
)
def test_sharing_changes_never_change_a_key(make_cluster, sharing) -> None:
    before = config_names(make_cluster({"sharing": {"strategy": "time-slicing", "replicas": 4}}))
    after = config_names(make_cluster({"sharing": sharing}))
    assert after.device_plugin_keys == before.device_plugin_keys == {"p1": "p1"}
    assert after.device_plugin_configs["p1"] != before.device_plugin_configs["p1"]


def _two_pools(make_cluster, **cluster):
    return make_cluster(
        cluster={
            "nodePools": [
                {
                    "name": "p1",
                    "gpu": "tesla-t4",
                    "nodes": 1,
                    "nodeSelector": {"pool": "p1"},
                    "sharing": {"strategy": "time-slicing", "replicas": 4},
                },
                {"name": "p2", "gpu": "l4", "nodes": 1, "nodeSelector": {"pool": "p2"}},
            ],
            **cluster,
        }
    )


def test_pools_that_differ_leave_unlabelled_nodes_whole(make_cluster) -> None:
    names = config_names(_two_pools(make_cluster))
    assert names.default_from is None
    assert names.device_plugin_configs["any"] == WHOLE


def test_default_sharing_names_a_pool(make_cluster) -> None:
    names = config_names(_two_pools(make_cluster, defaultSharing="p1"))
    assert names.default_from == "p1"
    assert names.device_plugin_configs["any"] == names.device_plugin_configs["p1"]
    assert (
        config_names(
            make_cluster({"sharing": {"strategy": "mps", "replicas": 2}}, {"defaultSharing": "none"})
        ).device_plugin_configs["any"]
        == WHOLE
    )


def test_default_sharing_must_name_a_pool(make_cluster) -> None:
    with pytest.raises(FleetError) as error:
        _two_pools(make_cluster, defaultSharing="p3")
    assert "defaultSharing 'p3' is neither auto, none nor a pool" in str(error.value)


def test_pool_name_any_is_reserved(make_cluster) -> None:
    pool = {"name": "any", "gpu": "tesla-t4", "nodes": 1, "nodeSelector": {"pool": "any"}}
    with pytest.raises(FleetError) as error:
        make_cluster(cluster={"nodePools": [pool], "workloads": [{"name": "w1", "namespace": "ml", "pool": "any"}]})
    assert "pool name 'any' is reserved" in str(error.value)


def test_retired_keys_are_kept_after_the_pools(make_cluster) -> None:
    cluster = make_cluster(
        cluster={"retired": {"devicePluginConfigs": {"time-slicing-4": {"strategy": "time-slicing", "replicas": 4}}}}
    )
    names = config_names(cluster)
    assert list(names.device_plugin_configs) == ["any", "p1", "time-slicing-4"]
    assert names.retired_device_plugin_keys == ("time-slicing-4",)
    assert names.device_plugin_configs["time-slicing-4"]["sharing"]["timeSlicing"]["resources"][0]["replicas"] == 4


def test_a_live_key_cannot_be_retired(make_cluster) -> None:
    with pytest.raises(FleetError) as error:
        make_cluster(cluster={"retired": {"devicePluginConfigs": {"p1": {"strategy": "none"}}}})
    assert "'p1' is a live device-plugin key" in str(error.value)


def test_retired_mig_config_is_kept_beside_the_new_one(make_cluster) -> None:
    cluster = make_cluster(
        {"gpu": "a100-40gb", "gpusPerNode": 8, "sharing": {"strategy": "mig", "layout": {"3g.20gb": 2}}},
        {
            "mig": {"strategy": "mixed"},
            "retired": {"migConfigs": [{"gpu": "a100-40gb", "layout": {"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 2}}]},
        },
        migProfile="3g.20gb",
    )
    names = config_names(cluster)
    assert list(names.mig_configs) == ["all-disabled", "custom-3g.20gb-2g.10gb-1g.5gbx2", "custom-3g.20gbx2"]
    assert names.retired_mig_configs == ("custom-3g.20gb-2g.10gb-1g.5gbx2",)


def test_retired_mig_layout_is_checked_like_a_pool_s(make_cluster) -> None:
    with pytest.raises(FleetError) as error:
        make_cluster(cluster={"retired": {"migConfigs": [{"gpu": "a100-40gb", "layout": {"4g.40gb": 1}}]}})
    assert 'clusters[0].retired.migConfigs[0].layout["4g.40gb"]: A100-40GB has no MIG profile' in str(error.value)


def test_mig_layout_names_are_readable_label_values() -> None:
    assert mig_layout_name((("1g.5gb", 2), ("3g.20gb", 1), ("2g.10gb", 1))) == "custom-3g.20gb-2g.10gb-1g.5gbx2"
    assert mig_layout_name((("1g.10gb+me", 1),)) == "custom-1g.10gb.me"
    long = tuple((f"{i}g.{i}00gb", i) for i in range(1, 9))
    name = mig_layout_name(long)
    assert name.startswith("custom-") and len(name) <= 63
