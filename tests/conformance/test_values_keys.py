"""The version tables hold against each GPU Operator chart's ``values.yaml``.

- ``VALUES_KEYS``: a gate that allows a version names a key path of that version's ``values.yaml``; a gate
  that does not allow it names a key absent there, or one listed in ``NO_OP_KEYS`` with its reason.
- ``OPERATOR_VERSIONS``: every chart folder upstream is a ``verified`` entry and the other way round; the
  device-plugin and mig-manager versions equal the chart's image tags without the OS suffix.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _fleets import NO_OP_KEYS, VERIFIED, chart_values, has_path, lookup, release

from gpustack_gen.validate.operator_keys import CLUSTERPOLICY_SPEC_KEYS, VALUES_KEYS, KeyGate
from gpustack_gen.versions import parse_version
from gpustack_gen.versions.gpu_operator import OPERATOR_VERSIONS, OperatorVersion

# Table entries with no chart files in ../shared/upstream: their component versions come from release
# notes only. A version that gains files must become verified (and leave this list).
UNVERIFIED = ("v25.3.4", "v25.10.1", "v26.3.3")

# Image tags carry an OS / base-image suffix in some releases: v0.14.5-ubi8, v0.12.3-ubuntu20.04.
_TAG = re.compile(r"^(v\d+\.\d+\.\d+)(?:-[a-z][a-z0-9.]*)?$")


def image_version(tag: str) -> str:
    match = _TAG.match(tag)
    assert match is not None, f"unexpected image tag {tag!r}"
    return match.group(1)


def ids(release: OperatorVersion) -> str:
    return release.version


def test_upstream_folders_are_exactly_the_verified_versions(upstream: Path) -> None:
    folders = sorted(p.name for p in (upstream / "gpu-operator").iterdir() if p.is_dir())
    assert folders, "no GPU Operator chart folders upstream"
    assert folders == sorted(v.version for v in VERIFIED)
    for version in folders:
        assert (upstream / "gpu-operator" / version / "values.yaml").is_file()
        assert (upstream / "gpu-operator" / version / "nvidia.com_clusterpolicies.yaml").is_file()


def test_versions_without_files_are_listed_as_unverified(upstream: Path) -> None:
    assert tuple(v.version for v in OPERATOR_VERSIONS if not v.verified) == UNVERIFIED
    for version in UNVERIFIED:
        assert not (upstream / "gpu-operator" / version).exists(), f"{version} has files now: verify it"


def test_version_table_is_well_formed() -> None:
    keys = [v.key for v in OPERATOR_VERSIONS]
    assert keys == sorted(set(keys)), "versions must be unique and in ascending order"
    for entry in OPERATOR_VERSIONS:
        assert parse_version(entry.device_plugin) is not None, entry
        assert parse_version(entry.mig_manager) is not None, entry
    plugin = [parse_version(v.device_plugin) for v in OPERATOR_VERSIONS]
    manager = [parse_version(v.mig_manager) for v in OPERATOR_VERSIONS]
    assert plugin == sorted(plugin, key=lambda t: t or (0, 0, 0)), "device-plugin versions never go backwards"
    assert manager == sorted(manager, key=lambda t: t or (0, 0, 0)), "mig-manager versions never go backwards"


@pytest.mark.parametrize("target", VERIFIED, ids=ids)
def test_component_versions_match_the_chart(upstream: Path, target: OperatorVersion) -> None:
    values = chart_values(upstream, target.version)
    assert image_version(values["devicePlugin"]["version"]) == target.device_plugin
    assert image_version(values["migManager"]["version"]) == target.mig_manager
    # The ClusterPolicy patch writes this default when the fleet pins no driver (a merge patch that omitted
    # the field would keep a previous pin).
    assert values["driver"]["version"] == target.driver
    assert values["devicePlugin"]["image"] == "k8s-device-plugin"
    assert values["migManager"]["image"] == "k8s-mig-manager"
    # From v24.3.0 GFD runs the device-plugin image at the same tag (v23.9.2 still shipped the separate
    # gpu-feature-discovery v0.8.2 image), so the device-plugin config rules apply to both.
    if values["gfd"]["image"] == "k8s-device-plugin":
        assert image_version(values["gfd"]["version"]) == target.device_plugin
    else:
        assert not target.has_mps, "GFD should be the device-plugin image from v24.3.0"


@pytest.mark.parametrize("target", VERIFIED, ids=ids)
def test_allowed_values_keys_exist_in_the_chart(upstream: Path, target: OperatorVersion) -> None:
    values = chart_values(upstream, target.version)
    allowed = [gate.path for gate in VALUES_KEYS if gate.allows(target)]
    assert allowed, "the gate table allows nothing"
    missing = [path for path in allowed if not has_path(values, path)]
    assert missing == [], f"keys gpustack-gen may write that values.yaml {target.version} lacks"


@pytest.mark.parametrize("target", VERIFIED, ids=ids)
def test_disallowed_values_keys_are_absent_or_documented_no_ops(upstream: Path, target: OperatorVersion) -> None:
    values = chart_values(upstream, target.version)
    for gate in VALUES_KEYS:
        if gate.allows(target) or not has_path(values, gate.path):
            continue
        assert gate.path in NO_OP_KEYS, f"{gate.path} is in values.yaml {target.version} but not written"
        assert target.at_least(NO_OP_KEYS[gate.path][0]), f"{gate.path} is no no-op in {target.version}"


@pytest.mark.parametrize("path", sorted(NO_OP_KEYS))
def test_no_op_exceptions_match_the_gate_table(path: str) -> None:
    since_no_op, reason = NO_OP_KEYS[path]
    assert reason.strip()
    gates = [g for g in (*VALUES_KEYS, *CLUSTERPOLICY_SPEC_KEYS) if g.path == path]
    assert gates, f"{path} is not in the gate table"
    assert {g.until for g in gates} == {since_no_op}


def test_cdi_default_is_gone_from_values_where_it_is_a_no_op(upstream: Path) -> None:
    """v26.7.0 dropped cdi.default from values.yaml; earlier charts default it to false."""
    for target in VERIFIED:
        default = lookup(chart_values(upstream, target.version), "cdi.default")
        if target.has_cdi_default:
            assert default is False, target.version
        else:
            assert not has_path(chart_values(upstream, target.version), "cdi.default"), target.version


@pytest.mark.parametrize("target", VERIFIED, ids=ids)
def test_feature_gates_agree_with_the_chart_defaults(upstream: Path, target: OperatorVersion) -> None:
    values = chart_values(upstream, target.version)
    assert lookup(values, "cdi.enabled") is target.cdi_enabled_by_default
    assert has_path(values, "cdi.nriPluginEnabled") is target.has_nri_plugin
    assert has_path(values, "operator.defaultRuntime") is target.has_default_runtime
    # The MPS control daemon and its root arrived together in v24.3.0.
    assert has_path(values, "devicePlugin.mps.root") is target.has_mps


def _gate(path: str) -> KeyGate:
    found = [g for g in VALUES_KEYS if g.path == path]
    assert len(found) == 1, path
    return found[0]


def test_gate_boundaries() -> None:
    """The version-gated keys switch exactly where the release notes say."""
    assert not _gate("cdi.nriPluginEnabled").allows(release("v25.10.1"))
    assert _gate("cdi.nriPluginEnabled").allows(release("v26.3.3"))
    assert _gate("cdi.default").allows(release("v25.3.4"))
    assert not _gate("cdi.default").allows(release("v25.10.1"))
    # devicePlugin.mps.root is a dead Helm value (no template reads it): only the patch may carry it.
    assert "devicePlugin.mps.root" not in {g.path for g in VALUES_KEYS}
    assert "devicePlugin.mps.root" in {g.path for g in CLUSTERPOLICY_SPEC_KEYS}
