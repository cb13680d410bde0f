from __future__ import annotations

from gpustack_gen.compile.plan import WHOLE_GPU_KEY, device_plugin_key, mig_layout_name, plan_cluster


def test_no_sharing_means_no_device_plugin_config(make_cluster) -> None:
    plan = plan_cluster(make_cluster())
    assert not plan.uses_device_plugin_config
    assert plan.device_plugin_keys == {}


def test_time_slicing_key_and_config(make_cluster) -> None:
    cluster = make_cluster({"sharing": {"strategy": "time-slicing", "replicas": 4}})
    plan = plan_cluster(cluster)
    assert plan.device_plugin_keys == {"p1": "time-slicing-4"}
    assert list(plan.device_plugin_configs) == [WHOLE_GPU_KEY, "time-slicing-4"]
    assert plan.device_plugin_configs[WHOLE_GPU_KEY] == {"version": "v1", "flags": {"migStrategy": "single"}}
    assert plan.device_plugin_configs["time-slicing-4"]["sharing"] == {
        "timeSlicing": {
            "renameByDefault": False,
            "failRequestsGreaterThanOne": False,
            "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
        }
    }


def test_keys_distinguish_every_setting(make_cluster) -> None:
    renamed = make_cluster(
        {
            "sharing": {
                "strategy": "time-slicing",
                "replicas": 3,
                "renameByDefault": True,
                "failRequestsGreaterThanOne": True,
            }
        }
    )
    assert device_plugin_key(renamed.pools[0]) == "time-slicing-3-renamed-one-per-pod"
    mps = make_cluster({"sharing": {"strategy": "mps", "replicas": 2}})
    assert device_plugin_key(mps.pools[0]) == "mps-2"
    config = plan_cluster(mps).device_plugin_configs["mps-2"]
    assert config["sharing"] == {
        "mps": {"renameByDefault": False, "resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}
    }


def test_pools_with_equal_settings_share_a_key(make_cluster) -> None:
    cluster = make_cluster(
        {"sharing": {"strategy": "time-slicing", "replicas": 4}},
        {
            "nodePools": [
                {
                    "name": "p1",
                    "gpu": "tesla-t4",
                    "nodes": 1,
                    "nodeSelector": {"pool": "p1"},
                    "sharing": {"strategy": "time-slicing", "replicas": 4},
                },
                {
                    "name": "p2",
                    "gpu": "l4",
                    "nodes": 1,
                    "nodeSelector": {"pool": "p2"},
                    "sharing": {"strategy": "time-slicing", "replicas": 4},
                },
                {"name": "p3", "gpu": "l4", "nodes": 1, "nodeSelector": {"pool": "p3"}},
            ]
        },
    )
    plan = plan_cluster(cluster)
    assert plan.device_plugin_keys == {"p1": "time-slicing-4", "p2": "time-slicing-4", "p3": WHOLE_GPU_KEY}
    assert list(plan.device_plugin_configs) == [WHOLE_GPU_KEY, "time-slicing-4"]


def test_mig_layout_names_are_readable_label_values() -> None:
    assert mig_layout_name((("1g.5gb", 2), ("3g.20gb", 1), ("2g.10gb", 1))) == "custom-3g.20gb-2g.10gb-1g.5gbx2"
    assert mig_layout_name((("1g.10gb+me", 1),)) == "custom-1g.10gb.me"
    long = tuple((f"{i}g.{i}00gb", i) for i in range(1, 9))
    name = mig_layout_name(long)
    assert name.startswith("custom-") and len(name) <= 63
