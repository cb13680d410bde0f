"""The validators memoise on content: same answers as without the memo, fresh lists, bounded caches."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from gpustack_gen.validate import device_plugin, kubernetes, mig_parted
from gpustack_gen.validate.device_plugin import check_device_plugin_config
from gpustack_gen.validate.findings import SchemaFinding
from gpustack_gen.validate.kubernetes import check_workload_fragment
from gpustack_gen.validate.memo import MEMO_SIZE, json_key
from gpustack_gen.validate.mig_parted import check_mig_parted_config

DEVICE_PLUGIN: list[Any] = [
    {"version": "v1", "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}}},
    {"version": "v1", "sharing": {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": "4"}]}}},
    {"version": "v1", "flags": {"migStrategy": "mixed", "renameByDefault": True}, "resources": {}},
    {"version": "v2", "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 1.5}]}}},
]
MIG_PARTED: list[Any] = [
    {"version": "v1", "mig-configs": {"a": [{"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 7}}]}},
    {"version": "v1", "mig-configs": {"a": [{"devices": "all", "mig-enabled": False, "mig-devices": {"1g.5gb": 1}}]}},
    {"version": "v1", "mig-configs": {"a": [{"device-filter": 548540638, "devices": "all", "mig-enabled": True}]}},
    {"mig-configs": []},
]
FRAGMENTS: list[Any] = [
    {"resources": {"limits": {"nvidia.com/gpu": "1"}}, "nodeSelector": {"pool": "t4"}},
    {"resources": {"limits": {"nvidia.com/gpu": True}, "requests": {"memory": "3 GiB"}}},
    {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exist", "effect": "NoSchedule"}], "nodeSelector": {}},
    # Broken in every part at once, and in ways that reach past one part's own keys.
    {
        "resources": {"limits": {"cpu": "x"}, "requets": {}, "claims": "all"},
        "nodeSelector": {"pool": 4, "zone": None},
        "tolerations": [{"key": 1, "operatr": "Exists"}, "NoSchedule", {"tolerationSeconds": "5"}],
        "replicaCount": 3,
    },
    {"resources": None, "nodeSelector": [], "tolerations": {}},
    {"resources": {}, "tolerations": []},
    {},
    {"image": "x"},
]

Check = Callable[[Any], list[SchemaFinding]]
CHECKS: list[tuple[str, Check, Check, list[Any]]] = [
    (
        "device-plugin",
        lambda c: check_device_plugin_config(c, device_plugin_version="v0.17.4", mps_root_from_operator=False),
        lambda c: device_plugin._check(c, "v0.17.4", False),
        DEVICE_PLUGIN,
    ),
    ("mig-parted", check_mig_parted_config, mig_parted._check, MIG_PARTED),
    (
        "workload",
        lambda c: check_workload_fragment(c, "1.29.15"),
        lambda c: kubernetes._check_fragment(c, "1.29.15"),
        FRAGMENTS,
    ),
]
MEMOS = [
    device_plugin._memoised,
    device_plugin._memoised_unversioned,
    mig_parted._memoised,
    mig_parted._clean_entry,
    mig_parted._clean_name,
    mig_parted._clean_skeleton,
    kubernetes._memoised_part,
]


def _reversed(value: Any) -> Any:
    """The same data with every mapping's keys in the opposite order."""
    if isinstance(value, dict):
        return {k: _reversed(v) for k, v in reversed(value.items())}
    if isinstance(value, list):
        return [_reversed(v) for v in value]
    return value


@pytest.mark.parametrize(("name", "check", "uncached", "configs"), CHECKS, ids=[c[0] for c in CHECKS])
def test_memoised_answers_are_the_unmemoised_answers_in_fresh_lists(
    name: str, check: Check, uncached: Check, configs: list[Any]
) -> None:
    assert any(uncached(c) for c in configs), f"{name}: no failing example"
    for config in configs:
        expected = uncached(config)
        first = check(config)
        assert first == expected
        first.append(SchemaFinding("x", "corrupted"))  # a caller changing its list ...
        first.clear()
        assert check(config) == expected  # ... does not change the next answer
        assert check(_reversed(config)) == expected  # key order does not matter to any check


def test_repeated_content_is_checked_once_and_the_memos_are_bounded() -> None:
    for memo in MEMOS:
        memo.cache_clear()
        assert memo.cache_info().maxsize == MEMO_SIZE
    kubernetes._valid_shapes.clear()
    fragment = FRAGMENTS[0]
    check_workload_fragment(fragment, "1.29.15")
    assert kubernetes._memoised_part.cache_info()[:2] == (0, 2)  # hits, misses: resources and nodeSelector
    check_workload_fragment({**fragment, "nodeSelector": {"pool": "a10"}}, "1.29.2")  # same shape: answered by it
    assert kubernetes._memoised_part.cache_info()[:2] == (0, 2)
    check_workload_fragment({"nodeSelector": fragment["nodeSelector"], "tolerations": []}, "1.29.15")  # a new shape
    assert kubernetes._memoised_part.cache_info()[:2] == (1, 3)  # of a part seen before and a new one
    check_mig_parted_config(MIG_PARTED[1])  # a config with a finding is checked whole
    check_mig_parted_config(_reversed(MIG_PARTED[1]))
    assert mig_parted._memoised.cache_info()[:2] == (1, 1)
    config = DEVICE_PLUGIN[1]
    check_device_plugin_config(config, device_plugin_version="v0.17.4", mps_root_from_operator=False)
    check_device_plugin_config(config, device_plugin_version="v0.17.4", mps_root_from_operator=True)
    check_device_plugin_config(config, device_plugin_version="v0.15.0", mps_root_from_operator=True)
    assert device_plugin._memoised.cache_info()[:2] == (0, 3)  # the version and the flag are in the key


def test_data_json_would_change_is_checked_without_the_memo() -> None:
    yaml = YAML(typ="rt")
    hand_written = yaml.load(
        "version: v1\nmig-configs:\n  a:\n  - {devices: all, mig-enabled: true, device-filter: 0x20B010DE}\n"
    )
    odd = [
        hand_written,  # ruamel's own mapping and integer types
        {"version": "v1", "mig-configs": {"a": ({"devices": "all", "mig-enabled": False},)}},  # a tuple
        {"version": "v1", 1: "x"},  # a key JSON would turn into "1"
        {"version": "v1", "mig-configs": {"a": [{"devices": "all", "mig-enabled": 1}]}},  # 1 is not true
    ]
    assert [json_key(c) for c in odd[:3]] == [None, None, None]
    mig_parted._memoised.cache_clear()
    for config in odd:
        assert check_mig_parted_config(config) == mig_parted._check(config)
    assert mig_parted._memoised.cache_info().currsize == 1  # only the last one is plain JSON
    assert json_key({"b": [1, True, None, 1.5, "x"], "a": {}}) == '{"a": {}, "b": [1, true, null, 1.5, "x"]}'


def test_a_bad_version_is_still_an_error_every_time() -> None:
    for _ in range(2):
        with pytest.raises(ValueError):
            check_device_plugin_config(DEVICE_PLUGIN[0], device_plugin_version="latest", mps_root_from_operator=True)
        with pytest.raises(ValueError, match="not a Kubernetes version"):
            check_workload_fragment(FRAGMENTS[0], "latest")


# Entries clean on their own and entries with a finding of the schema or of a rule here, in every way
# a finding can reach past the entry's own keys (a quoted index, an unquoted PCI ID, a profile's sign).
MIG_ENTRIES: list[Any] = [
    {"devices": "all", "mig-enabled": False},
    {"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 7}},
    {"devices": [0, 1], "mig-enabled": True, "mig-devices": {"3g.40gb": 2}, "device-filter": "0x20B010DE"},
    {"devices": "all", "mig-enabled": True, "mig-devices": {}},
    {"devices": "all", "mig-enabled": False, "mig-devices": {"1g.5gb": 1}},
    {"devices": ["0"], "mig-enabled": True},
    {"devices": "all", "mig-enabled": True, "device-filter": 548540638},
    {"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb+me-x": 1, "2g.20gb": 0}},
    {"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 0}},
    {"devices": "all", "mig-enabled": "yes", "extra": 1},
    {},
    "all",
    None,
]
MIG_NAMES = ["all-1g.10gb", "custom", "-bad-", "x" * 64]


@settings(max_examples=150, deadline=None)
@given(
    configs=st.dictionaries(
        st.sampled_from(MIG_NAMES),
        st.one_of(st.lists(st.sampled_from(MIG_ENTRIES), max_size=4), st.sampled_from([{}, "all", None])),
        max_size=3,
    ),
    version=st.sampled_from(["v1", "v2", None]),
)
def test_a_config_checked_by_its_entries_has_the_findings_of_the_whole(configs: dict[str, Any], version: Any) -> None:
    config: dict[str, Any] = {"mig-configs": configs}
    if version is not None:
        config["version"] = version
    assert check_mig_parted_config(config) == mig_parted._check(config)


def test_each_entry_is_checked_once_and_the_stand_in_is_clean() -> None:
    assert mig_parted._check({"version": "v1", "mig-configs": {"a": [mig_parted._CLEAN_ENTRY]}}) == []
    mig_parted._clean_entry.cache_clear()
    shared, other = MIG_ENTRIES[1], MIG_ENTRIES[2]
    check_mig_parted_config({"version": "v1", "mig-configs": {"a": [shared], "b": [other]}})
    check_mig_parted_config({"version": "v1", "mig-configs": {"c": [other, shared]}})
    assert mig_parted._clean_entry.cache_info()[:2] == (2, 2)  # hits, misses: two distinct entries


@pytest.mark.parametrize("version", ["v0.14.5", "v0.15.0", "v0.17.0", "v0.17.4", "v0.18.0", "v0.20.1"])
def test_device_plugin_findings_for_each_version_are_the_unmemoised_ones(version: str) -> None:
    configs = [*DEVICE_PLUGIN, {"version": "v1", "sharing": {"mps": {"failRequestsGreaterThanOne": False}}}]
    for config in configs:
        for mps_root in (False, True):
            expected = device_plugin._check(config, version, mps_root)
            assert (
                check_device_plugin_config(config, device_plugin_version=version, mps_root_from_operator=mps_root)
                == expected
            )


def test_the_version_free_part_of_a_device_plugin_config_is_checked_once() -> None:
    device_plugin._memoised.cache_clear()
    device_plugin._memoised_unversioned.cache_clear()
    for version in ("v0.15.0", "v0.17.4"):
        for config in DEVICE_PLUGIN[:2]:
            check_device_plugin_config(config, device_plugin_version=version, mps_root_from_operator=False)
    assert device_plugin._memoised.cache_info().misses == 4
    assert device_plugin._memoised_unversioned.cache_info()[:2] == (2, 2)
