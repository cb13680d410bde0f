"""Sharing resolution (pool > cluster[gpu] > cluster default > fleet[gpu] > fleet default > none) and defaults."""

from __future__ import annotations

import pytest
from fleet_text import BASE, check, edit, load, the_error

from gpustack_gen.model import Fleet, Sharing
from gpustack_gen.model.backends.gpu_operator import mig_resource
from gpustack_gen.model.fleet import canonical_mig_layout, mig_profile_sort_key

# Line 3 of BASE is "defaults:"; line 9 "mig: ..."; line 16 the pool's "sharing: ...".
FLEET_SHARING = "defaults:\n  operator: {version: v25.3.3}\n  sharing:\n    default: {strategy: time-slicing, replicas: 2}\n    tesla-t4: {strategy: time-slicing, replicas: 3}"


def pool_sharing(fleet: Fleet) -> Sharing:
    return fleet.clusters[0].pools[0].sharing


def levels(
    *, pool: str = "", cluster_gpu: str = "", cluster_default: str = "", fleet_gpu: str = "", fleet_default: str = ""
) -> str:
    """BASE with sharing entries at the given levels (empty: none at that level)."""
    fleet_lines = [
        f"    {name}: {entry}" for name, entry in (("default", fleet_default), ("tesla-t4", fleet_gpu)) if entry
    ]
    cluster_lines = [
        f"  {name}: {entry}" for name, entry in (("default", cluster_default), ("Tesla-T4", cluster_gpu)) if entry
    ]
    changes = {16: f"sharing: {pool}" if pool else "# no pool sharing"}
    changes[4] = "operator: {version: v25.3.3}" + (
        "\nsharing:\n" + "\n".join(line[2:] for line in fleet_lines) if fleet_lines else ""
    )
    changes[9] = "mig: {strategy: single}" + ("\nsharing:\n" + "\n".join(cluster_lines) if cluster_lines else "")
    return edit(changes)


def test_nothing_anywhere_is_whole_gpus() -> None:
    assert pool_sharing(load(levels())) == Sharing("none")


@pytest.mark.parametrize(
    ("given", "replicas"),
    [
        ({"fleet_default": "{strategy: time-slicing, replicas: 2}"}, 2),
        (
            {
                "fleet_default": "{strategy: time-slicing, replicas: 2}",
                "fleet_gpu": "{strategy: time-slicing, replicas: 3}",
            },
            3,
        ),
        (
            {
                "fleet_gpu": "{strategy: time-slicing, replicas: 3}",
                "cluster_default": "{strategy: time-slicing, replicas: 4}",
            },
            4,
        ),
        (
            {
                "cluster_default": "{strategy: time-slicing, replicas: 4}",
                "cluster_gpu": "{strategy: time-slicing, replicas: 5}",
            },
            5,
        ),
        ({"cluster_gpu": "{strategy: time-slicing, replicas: 5}", "pool": "{strategy: time-slicing, replicas: 6}"}, 6),
        (
            {
                "fleet_default": "{strategy: time-slicing, replicas: 2}",
                "fleet_gpu": "{strategy: time-slicing, replicas: 3}",
                "cluster_default": "{strategy: time-slicing, replicas: 4}",
                "cluster_gpu": "{strategy: time-slicing, replicas: 5}",
                "pool": "{strategy: time-slicing, replicas: 6}",
            },
            6,
        ),
    ],
    ids=["fleet-default", "fleet-gpu", "cluster-default", "cluster-gpu", "pool", "all-levels"],
)
def test_the_most_specific_level_wins(given: dict[str, str], replicas: int) -> None:
    sharing = pool_sharing(load(levels(**given)))
    assert (sharing.strategy, sharing.replicas) == ("time-slicing", replicas)


def test_a_partial_entry_merges_over_the_next_level_down() -> None:
    fleet = load(
        levels(fleet_gpu="{strategy: time-slicing, replicas: 4, renameByDefault: true}", cluster_gpu="{replicas: 5}")
    )
    assert pool_sharing(fleet) == Sharing("time-slicing", replicas=5, rename_by_default=True)


def test_partial_entries_merge_through_every_level() -> None:
    fleet = load(
        levels(
            fleet_default="{strategy: time-slicing}",
            fleet_gpu="{replicas: 3}",
            cluster_gpu="{renameByDefault: true}",
            pool="{failRequestsGreaterThanOne: true}",
        )
    )
    assert pool_sharing(fleet) == Sharing(
        "time-slicing", replicas=3, rename_by_default=True, fail_requests_greater_than_one=True
    )


def test_a_different_strategy_starts_over() -> None:
    # The fleet's time-slicing options do not leak into the cluster's mps entry: mps needs its own replicas.
    problem = the_error(
        levels(fleet_gpu="{strategy: time-slicing, replicas: 4, renameByDefault: true}", cluster_gpu="{strategy: mps}")
    )
    check(problem, "fleet.yaml:13:17", "clusters[0].sharing.Tesla-T4", "mps needs replicas", "add replicas")


def test_a_different_strategy_drops_the_options_below() -> None:
    fleet = load(
        levels(
            fleet_gpu="{strategy: time-slicing, replicas: 4, renameByDefault: true}",
            pool="{strategy: mps, replicas: 2}",
        )
    )
    # MPS refuses requests for more than one replica: device plugin v0.17.4 (GPU Operator v25.3.3) forces it.
    assert pool_sharing(fleet) == Sharing("mps", replicas=2, fail_requests_greater_than_one=True)


def test_a_strategy_above_completes_a_partial_entry_below() -> None:
    # S2: the entry below has no strategy, so there is nothing to start over from: its replicas carry up.
    fleet = load(levels(fleet_default="{replicas: 4}", cluster_gpu="{strategy: time-slicing}"))
    assert pool_sharing(fleet) == Sharing("time-slicing", replicas=4)


def test_the_same_strategy_above_keeps_the_options_below() -> None:
    fleet = load(levels(fleet_gpu="{strategy: time-slicing, replicas: 4}", pool="{strategy: time-slicing}"))
    assert pool_sharing(fleet) == Sharing("time-slicing", replicas=4)


@pytest.mark.parametrize(
    ("version", "written", "honoured"),
    [
        ("v25.3.3", "", True),
        ("v25.3.3", ", failRequestsGreaterThanOne: true", True),
        ("v26.3.3", ", failRequestsGreaterThanOne: true", True),
        ("v26.7.0", "", True),
        ("v26.7.0", ", failRequestsGreaterThanOne: true", True),
        ("v26.7.0", ", failRequestsGreaterThanOne: false", False),
    ],
)
def test_mps_fail_requests_greater_than_one_is_what_the_device_plugin_applies(
    version: str, written: str, honoured: bool
) -> None:
    # S3: v0.20.0 (GPU Operator v26.7.0) honours the value and defaults to true; older plugins force true.
    text = edit({4: f"operator: {{version: {version}}}", 16: f"sharing: {{strategy: mps, replicas: 4{written}}}"})
    assert pool_sharing(load(text)).fail_requests_greater_than_one is honoured


def test_strategy_none_at_the_pool_beats_the_fleet_policy() -> None:
    fleet = load(levels(fleet_gpu="{strategy: time-slicing, replicas: 4}", pool="{strategy: none}"))
    assert pool_sharing(fleet) == Sharing("none")


def a100(**given: str) -> str:
    return (
        levels(**given)
        .replace("gpu: tesla-t4", "gpu: a100-40gb")
        .replace("Tesla-T4:", "a100-40gb:")
        .replace("tesla-t4:", "a100-40gb:")
    )


def test_a_layout_replaces_a_config_from_below() -> None:
    fleet = load(a100(fleet_gpu="{strategy: mig, config: all-balanced}", pool='{layout: {"3g.20gb": 2}}'))
    assert pool_sharing(fleet) == Sharing("mig", mig_layout=(("3g.20gb", 2),))


def test_a_config_replaces_a_layout_from_below() -> None:
    fleet = load(a100(fleet_gpu='{strategy: mig, layout: {"3g.20gb": 2}}', pool="{config: all-1g.5gb}"))
    assert pool_sharing(fleet) == Sharing("mig", mig_config="all-1g.5gb")


@pytest.mark.parametrize(
    "layout", ['{"1g.5gb": 2, "3g.20gb": 1, "2g.10gb": 1}', '{"2g.10gb": 1, "1g.5gb": 2, "3g.20gb": 1}']
)
def test_a_layout_is_canonical_whatever_the_key_order(layout: str) -> None:
    # B6: largest profile first (compute slices descending, then name), as the mig-parted config names are.
    text = a100(pool=f"{{strategy: mig, layout: {layout}}}").replace(
        "mig: {strategy: single}", "mig: {strategy: mixed}"
    )
    fleet = load(text.replace("pool: pool}", "pool: pool, migProfile: 1g.5gb}"))
    assert pool_sharing(fleet).mig_layout == (("3g.20gb", 1), ("2g.10gb", 1), ("1g.5gb", 2))


def test_mig_profile_sort_key_orders_largest_first() -> None:
    names = ["1g.10gb", "1g.5gb+me", "7g.40gb", "1c.3g.20gb", "3g.20gb", "1g.5gb", "odd"]
    assert sorted(names, key=mig_profile_sort_key) == [
        "7g.40gb",
        "1c.3g.20gb",
        "3g.20gb",
        "1g.10gb",
        "1g.5gb",
        "1g.5gb+me",
        "odd",
    ]
    assert canonical_mig_layout([("1g.5gb", 7), ("7g.40gb", 1)]) == (("7g.40gb", 1), ("1g.5gb", 7))


def test_a_layout_is_replaced_whole_not_merged() -> None:
    fleet = load(a100(fleet_gpu='{strategy: mig, layout: {"3g.20gb": 2}}', cluster_gpu='{layout: {"1g.5gb": 7}}'))
    assert pool_sharing(fleet).mig_layout == (("1g.5gb", 7),)


def test_a_sharing_key_may_be_a_product_label() -> None:
    fleet = load(levels(cluster_gpu="{strategy: time-slicing, replicas: 7}"))  # written as Tesla-T4
    assert pool_sharing(fleet).replicas == 7


# --- defaults ----------------------------------------------------------------------------------------------


def test_operator_defaults_deep_merge_and_the_cluster_wins() -> None:
    text = edit(
        {
            4: "operator: {version: v25.3.3, namespace: gpu-system, cdi: {enabled: true, default: true}, driver: {enabled: false}}",
            8: "containerRuntime: containerd\noperator: {cdi: {default: false}, toolkit: {enabled: false}}",
        }
    )
    operator = load(text).clusters[0].operator
    assert operator.release.version == "v25.3.3"
    assert operator.namespace == "gpu-system"
    assert operator.cdi_enabled is True  # from the fleet: the cluster's cdi mapping only sets default
    assert operator.cdi_default is False  # the cluster's value wins
    assert operator.driver_enabled is False
    assert operator.toolkit_enabled is False


def test_cluster_settings_come_from_defaults() -> None:
    text = edit(
        {
            3: 'defaults:\n  kubernetes: "1.30.8"\n  containerRuntime: cri-o\n  mig: {strategy: mixed}',
            7: "# from defaults",
            8: "# from defaults",
            9: "# from defaults",
        }
    )
    cluster = load(text).clusters[0]
    assert (cluster.kubernetes, cluster.container_runtime, cluster.mig_strategy) == ("1.30.8", "cri-o", "mixed")


def test_built_in_defaults() -> None:
    text = edit({4: "sharing: {}", 8: "# containerd by default", 9: "# single by default"})
    cluster = load(text).clusters[0]
    assert (cluster.container_runtime, cluster.mig_strategy, cluster.operator.namespace) == (
        "containerd",
        "single",
        "gpu-operator",
    )
    assert cluster.operator.release.version == "v26.7.0"  # the newest known
    assert cluster.operator.cdi_enabled is True  # on by default from v25.10.0


def test_a_wrong_fleet_default_is_reported_once_for_all_clusters() -> None:
    second = "\n".join(BASE.splitlines()[5:16]).replace("name: prod", "name: stage")
    text = edit({4: "operator: {version: v25.3.3, cdi: {nriPluginEnabled: true}}"}) + second + "\n"
    problem = the_error(text)
    check(
        problem,
        "fleet.yaml:4:56",
        "defaults.operator.cdi.nriPluginEnabled",
        "does not exist in GPU Operator v25.3.3",
        "v26.3.0",
    )


# --- what pools offer and what workloads ask for ------------------------------------------------------------


def test_requested_by_pool_sums_gpus_times_replicas_per_resource() -> None:
    text = edit(
        {
            9: "mig: {strategy: mixed}",
            12: "gpu: a100-40gb",
            13: "nodes: 4",
            16: 'sharing: {strategy: mig, layout: {"1g.5gb": 4, "3g.20gb": 1}}',
            18: "- {name: a, namespace: ml, pool: pool, migProfile: 1g.5gb, replicas: 3}\n"
            "- {name: b, namespace: ml, pool: pool, migProfile: 1g.5gb, gpus: 2, replicas: 2}\n"
            "- {name: c, namespace: ml, pool: pool, migProfile: 3g.20gb}",
        }
    )
    cluster = load(text).clusters[0]
    assert cluster.requested_by_pool() == {"pool": {"nvidia.com/mig-1g.5gb": 7, "nvidia.com/mig-3g.20gb": 1}}
    assert cluster.requested_by_pool(cluster.workloads[2:]) == {"pool": {"nvidia.com/mig-3g.20gb": 1}}
    pool = cluster.pools[0]
    assert mig_resource(pool, "1g.5gb") == "nvidia.com/mig-1g.5gb"
    assert cluster.resources_per_gpu(pool) == {"nvidia.com/mig-3g.20gb": 1, "nvidia.com/mig-1g.5gb": 4}
