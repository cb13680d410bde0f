"""Device-plugin config checks: one test per schema constraint and per cross-field rule.

Every failing case asserts the exact field path and a fragment of the message, because those are what
a user sees. Also covers the schema file itself (metaschema, descriptions, strictness) and the schema
loader/finding helpers the checks are built on.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from gpustack_gen.validate import SchemaFinding, check_device_plugin_config, schema_files
from gpustack_gen.validate.device_plugin import SCHEMA_NAME
from gpustack_gen.validate.findings import describe_value, format_path, generic_path

TIME_SLICING = """\
version: v1
sharing:
  timeSlicing:
    renameByDefault: false
    failRequestsGreaterThanOne: true
    resources:
    - name: nvidia.com/gpu
      replicas: 4
"""

MPS = """\
version: v1
sharing:
  mps:
    resources:
    - name: nvidia.com/gpu
      replicas: 4
"""


def load(text: str) -> Any:
    return YAML(typ="safe").load(text)


def check(config: Mapping[str, Any], version: str = "v0.17.4", *, operator: bool = False) -> list[SchemaFinding]:
    return check_device_plugin_config(config, device_plugin_version=version, mps_root_from_operator=operator)


def only(findings: list[SchemaFinding], path: str) -> SchemaFinding:
    """The single finding at ``path``; fails with the full list otherwise."""
    at_path = [f for f in findings if f.path == path]
    assert len(at_path) == 1, findings
    return at_path[0]


def time_slicing(**resource: object) -> dict[str, Any]:
    config: dict[str, Any] = load(TIME_SLICING)
    config["sharing"]["timeSlicing"]["resources"][0].update(resource)
    return config


def with_flags(base: dict[str, Any], **flags: object) -> dict[str, Any]:
    config = copy.deepcopy(base)
    config.setdefault("flags", {}).update(flags)
    return config


RESOURCE = "sharing.timeSlicing.resources[0]"


# --- valid configs -------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["v0.14.5", "v0.17.4", "v0.20.0"])
def test_valid_time_slicing_config_passes(version: str) -> None:
    assert check(time_slicing(), version) == []


def test_every_flag_accepted_on_newest_version() -> None:
    config = load("""\
version: v1
flags:
  migStrategy: single
  failOnInitError: true
  nvidiaDriverRoot: /run/nvidia/driver
  nvidiaDevRoot: /
  mpsRoot: /run/nvidia/mps
  gdsEnabled: false
  mofedEnabled: false
  gdrcopyEnabled: false
  useNodeFeatureAPI: true
  deviceDiscoveryStrategy: auto
  plugin:
    passDeviceSpecs: true
    deviceListStrategy: [envvar, cdi-cri]
    deviceIDStrategy: index
    cdiAnnotationPrefix: cdi.k8s.io/
    nvidiaCTKPath: /usr/bin/nvidia-ctk
    containerDriverRoot: /driver-root
    sharedDevicesAllocationPolicy: packed
  gfd:
    oneshot: false
    noTimestamp: true
    sleepInterval: infinite
    outputFile: /etc/kubernetes/node-feature-discovery/features.d/gfd
    machineTypeFile: /sys/class/dmi/id/product_name
sharing:
  timeSlicing:
    renameByDefault: true
    resources:
    - name: gpu
      replicas: 2
imex:
  channelIDs: [0]
  required: true
""")
    assert check(config, "v0.20.0") == []


@pytest.mark.parametrize("name", ["gpu", "nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "nvidia.com/gpu.shared", "a" * 52])
def test_valid_resource_names(name: str) -> None:
    assert check(time_slicing(name=name)) == []


# --- replicas ------------------------------------------------------------------------------------


@pytest.mark.parametrize("replicas", [1, 0, -3])
def test_replicas_below_two(replicas: int) -> None:
    finding = only(check(time_slicing(replicas=replicas)), f"{RESOURCE}.replicas")
    assert f"expected an integer >= 2, got {replicas}" in finding.message


def test_quoted_replicas_is_one_finding_saying_remove_the_quotes() -> None:
    findings = check(time_slicing(replicas="4"))
    assert len(findings) == 1
    finding = only(findings, f"{RESOURCE}.replicas")
    assert "must not be quoted" in finding.message
    assert "got '4' (a string)" in finding.message
    assert "replicas: 4 without quotes" in finding.hint


def test_quoted_replicas_below_two_mentions_the_minimum() -> None:
    finding = only(check(time_slicing(replicas="1")), f"{RESOURCE}.replicas")
    assert "at least 2" in finding.hint


@pytest.mark.parametrize(("value", "shown"), [("four", "'four' (a string)"), (True, "true (a boolean)")])
def test_replicas_of_wrong_type(value: object, shown: str) -> None:
    finding = only(check(time_slicing(replicas=value)), f"{RESOURCE}.replicas")
    assert f"expected an integer >= 2, got {shown}" in finding.message


def test_missing_replicas_and_name() -> None:
    config = time_slicing()
    del config["sharing"]["timeSlicing"]["resources"][0]["replicas"]
    del config["sharing"]["timeSlicing"]["resources"][0]["name"]
    findings = check(config)
    assert "missing required key 'replicas'" in only(findings, f"{RESOURCE}.replicas").message
    assert "missing required key 'name'" in only(findings, f"{RESOURCE}.name").message


def test_empty_resources_list() -> None:
    config = time_slicing()
    config["sharing"]["timeSlicing"]["resources"] = []
    finding = only(check(config), "sharing.timeSlicing.resources")
    assert "at least one shared resource" in finding.message


def test_sharing_block_without_resources() -> None:
    config = load("version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n")
    assert "missing required key" in only(check(config), "sharing.timeSlicing.resources").message


# --- enums ---------------------------------------------------------------------------------------


def test_mig_strategy_is_case_sensitive() -> None:
    finding = only(check(with_flags(time_slicing(), migStrategy="Mixed")), "flags.migStrategy")
    assert "got 'Mixed'" in finding.message
    assert "'none', 'single', 'mixed'" in finding.message
    assert "case-sensitive" in finding.hint and "'mixed'" in finding.hint


def test_mig_strategy_typo_gets_did_you_mean() -> None:
    finding = only(check(with_flags(time_slicing(), migStrategy="singel")), "flags.migStrategy")
    assert "did you mean 'single'?" in finding.hint


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("deviceIDStrategy", "UUID"),
        ("sharedDevicesAllocationPolicy", "spread"),
    ],
)
def test_plugin_enums(flag: str, value: str) -> None:
    config = with_flags(time_slicing(), plugin={flag: value})
    finding = only(check(config, "v0.20.0"), f"flags.plugin.{flag}")
    assert f"got {value!r}" in finding.message


def test_device_discovery_strategy_enum() -> None:
    config = with_flags(time_slicing(), deviceDiscoveryStrategy="NVML")
    finding = only(check(config, "v0.20.0"), "flags.deviceDiscoveryStrategy")
    assert "'auto', 'nvml', 'tegra'" in finding.message


def test_unknown_device_list_strategy() -> None:
    finding = only(
        check(with_flags(time_slicing(), plugin={"deviceListStrategy": "cdi"})),
        "flags.plugin.deviceListStrategy",
    )
    assert "'envvar', 'volume-mounts', 'cdi-annotations', 'cdi-cri'" in finding.message


def test_unknown_device_list_strategy_in_a_list_points_at_the_item() -> None:
    config = with_flags(time_slicing(), plugin={"deviceListStrategy": ["envvar", "Volume-Mounts"]})
    finding = only(check(config), "flags.plugin.deviceListStrategy[1]")
    assert "got 'Volume-Mounts'" in finding.message
    assert "'volume-mounts'" in finding.hint


def test_gfd_sleep_interval_must_be_a_duration_string() -> None:
    assert check(with_flags(time_slicing(), gfd={"sleepInterval": "1m30s"})) == []
    finding = only(check(with_flags(time_slicing(), gfd={"sleepInterval": 60})), "flags.gfd.sleepInterval")
    assert "Go duration" in finding.message and "got 60 (an integer)" in finding.message


# --- resource names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "nvidia.com/mig-*",
        "example.com/gpu",
        "nvidia.com/GPU",
        "nvidia.com/" + "a" * 53,  # 64 characters in total
        "a" * 53,  # becomes nvidia.com/<53 characters>
        "nvidia.com/-gpu",
        "",
    ],
)
def test_invalid_resource_names(name: str) -> None:
    finding = only(check(time_slicing(name=name)), f"{RESOURCE}.name")
    assert "DNS-1123" in finding.message
    assert f"got {name!r}" in finding.message


def test_uppercase_resource_name_hint() -> None:
    finding = only(check(time_slicing(name="nvidia.com/GPU")), f"{RESOURCE}.name")
    assert "use lowercase: 'nvidia.com/gpu'" in finding.hint


# --- unknown and misplaced keys ------------------------------------------------------------------


@pytest.mark.parametrize("key", ["renameByDefault", "failRequestsGreaterThanOne"])
def test_sharing_key_under_flags_is_misplaced(key: str) -> None:
    """NVIDIA/k8s-device-plugin#1433: upstream silently ignores these under ``flags``."""
    finding = only(check(with_flags(time_slicing(), **{key: True})), f"flags.{key}")
    assert finding.message == f"unknown key {key!r} (did you mean sharing.timeSlicing.{key}?)"
    assert f"move it to sharing.timeSlicing.{key}" in finding.hint
    assert "silently ignores" in finding.hint


def test_replicas_directly_under_time_slicing_is_misplaced() -> None:
    config = time_slicing()
    config["sharing"]["timeSlicing"]["replicas"] = 4
    finding = only(check(config), "sharing.timeSlicing.replicas")
    assert "did you mean sharing.timeSlicing.resources[].replicas?" in finding.message


def test_unknown_top_level_key() -> None:
    config = time_slicing()
    config["bogusTopLevel"] = True
    finding = only(check(config), "bogusTopLevel")
    assert finding.message == "unknown key 'bogusTopLevel'"
    assert "silently ignores" in finding.hint


def test_unknown_key_gets_did_you_mean_from_siblings() -> None:
    finding = only(check(with_flags(time_slicing(), migStrategyy="none")), "flags.migStrategyy")
    assert "(did you mean flags.migStrategy?)" in finding.message


def test_miscased_key_is_refused() -> None:
    """Upstream matches keys case-insensitively; gpustack-gen emits them exactly."""
    finding = only(check(with_flags(time_slicing(), migstrategy="none")), "flags.migstrategy")
    assert "did you mean flags.migStrategy?" in finding.message
    assert "case-sensitive" in finding.hint


def test_unknown_key_inside_a_list_entry() -> None:
    finding = only(check(time_slicing(replica=4)), f"{RESOURCE}.replica")
    assert "did you mean sharing.timeSlicing.resources[0].replicas?" in finding.message


@pytest.mark.parametrize(("version", "message"), [("v2", "expected 'v1', got 'v2'"), (None, "missing")])
def test_version_field(version: str | None, message: str) -> None:
    config = time_slicing()
    if version is None:
        del config["version"]
    else:
        config["version"] = version
    assert message in only(check(config), "version").message


# --- version gates (x-since) --------------------------------------------------------------------


def test_mps_before_v0_15_0() -> None:
    findings = check(load(MPS), "v0.14.5")
    finding = only(findings, "sharing.mps")
    assert finding.message == "not supported by device plugin v0.14.5 (added in v0.15.0)"
    # MPS rules do not apply on a version that ignores sharing.mps.
    assert [f.path for f in findings] == ["sharing.mps"]


@pytest.mark.parametrize(
    ("flags", "path", "too_old", "since"),
    [
        ({"mpsRoot": "/run/nvidia/mps"}, "flags.mpsRoot", "v0.14.5", "v0.15.0"),
        ({"useNodeFeatureAPI": True}, "flags.useNodeFeatureAPI", "v0.14.5", "v0.15.0"),
        ({"nvidiaDevRoot": "/"}, "flags.nvidiaDevRoot", "v0.15.2", "v0.16.0"),
        ({"deviceDiscoveryStrategy": "nvml"}, "flags.deviceDiscoveryStrategy", "v0.15.0", "v0.16.0"),
        ({"gdrcopyEnabled": True}, "flags.gdrcopyEnabled", "v0.17.4", "v0.18.0"),
        (
            {"plugin": {"sharedDevicesAllocationPolicy": "packed"}},
            "flags.plugin.sharedDevicesAllocationPolicy",
            "v0.19.3",
            "v0.20.0",
        ),
    ],
)
def test_flag_version_gates(flags: dict[str, Any], path: str, too_old: str, since: str) -> None:
    config = with_flags(time_slicing(), **flags)
    finding = only(check(config, too_old), path)
    assert finding.message == f"not supported by device plugin {too_old} (added in {since})"
    assert check(config, since) == []


def test_imex_version_gate() -> None:
    config = time_slicing()
    config["imex"] = {"channelIDs": [0]}
    assert "added in v0.17.0" in only(check(config, "v0.16.2"), "imex").message
    assert check(config, "v0.17.0") == []


def test_cdi_cri_rejected_by_v0_14_5() -> None:
    config = with_flags(time_slicing(), plugin={"deviceListStrategy": "cdi-cri"})
    finding = only(check(config, "v0.14.5"), "flags.plugin.deviceListStrategy")
    assert finding.message == "'cdi-cri' is not supported by device plugin v0.14.5 (added in v0.15.0)"
    assert "rejects" in finding.hint
    assert check(config, "v0.15.0") == []


def test_cdi_cri_in_a_strategy_list_points_at_the_item() -> None:
    config = with_flags(time_slicing(), plugin={"deviceListStrategy": ["envvar", "cdi-cri"]})
    finding = only(check(config, "v0.14.5"), "flags.plugin.deviceListStrategy[1]")
    assert "added in v0.15.0" in finding.message


def test_infinite_sleep_interval_gate() -> None:
    config = with_flags(time_slicing(), gfd={"sleepInterval": "infinite"})
    assert "added in v0.19.0" in only(check(config, "v0.18.1"), "flags.gfd.sleepInterval").message
    assert check(config, "v0.19.0") == []


@pytest.mark.parametrize("version", ["0.17.4", "v0.17", "v0.15.0-rc.1"])
def test_version_forms_accepted(version: str) -> None:
    assert check(time_slicing(), version) == []


@pytest.mark.parametrize("version", ["", "latest", "v1", "0.x.1"])
def test_bad_device_plugin_version_raises(version: str) -> None:
    with pytest.raises(ValueError, match="not a device plugin version"):
        check(time_slicing(), version)


# --- MPS rules -----------------------------------------------------------------------------------


def test_mps_with_mixed_mig_strategy() -> None:
    config = with_flags(load(MPS), migStrategy="mixed")
    finding = only(check(config, operator=True), "flags.migStrategy")
    assert "not supported with MPS" in finding.message


@pytest.mark.parametrize("strategy", ["none", "single"])
def test_mps_with_other_mig_strategies(strategy: str) -> None:
    assert check(with_flags(load(MPS), migStrategy=strategy), operator=True) == []


def test_mps_without_mps_root() -> None:
    finding = only(check(load(MPS), operator=False), "flags.mpsRoot")
    assert "requires flags.mpsRoot" in finding.message
    assert "/run/nvidia/mps" in finding.hint


def test_mps_without_mps_root_under_the_gpu_operator() -> None:
    assert check(load(MPS), operator=True) == []


def test_mps_with_mps_root_in_the_file() -> None:
    assert check(with_flags(load(MPS), mpsRoot="/run/nvidia/mps"), operator=False) == []


def test_time_slicing_and_mps_together() -> None:
    config = load(MPS)
    config["sharing"]["timeSlicing"] = time_slicing()["sharing"]["timeSlicing"]
    finding = only(check(config, operator=True), "sharing.timeSlicing")
    assert "uses MPS" in finding.message


def test_mps_fail_requests_false_is_forced_on_v0_17() -> None:
    config = load(MPS)
    config["sharing"]["mps"]["failRequestsGreaterThanOne"] = False
    finding = only(check(config, "v0.17.4", operator=True), "sharing.mps.failRequestsGreaterThanOne")
    assert "has no effect" in finding.message
    assert check(config, "v0.20.0", operator=True) == []


# --- keys upstream parses, then drops ------------------------------------------------------------


def test_top_level_resources_have_no_effect() -> None:
    config = time_slicing()
    config["resources"] = {"gpus": [{"pattern": "*", "name": "gpu"}]}
    finding = only(check(config), "resources")
    assert "has no effect" in finding.message


def test_resources_entries_still_validated() -> None:
    config = time_slicing()
    config["resources"] = {"mig": [{"pattern": "1g.10gb"}]}
    assert "missing required key 'name'" in only(check(config), "resources.mig[0].name").message


def test_rename_has_no_effect() -> None:
    finding = only(check(time_slicing(rename="gpu-shared")), f"{RESOURCE}.rename")
    assert "has no effect" in finding.message
    assert "renameByDefault" in finding.hint


@pytest.mark.parametrize("devices", [2, [0, "1"], ["0:1"], ["GPU-8e3cbd5a-0c6f-4c4b-9c1a-1b2c3d4e5f60"]])
def test_devices_other_than_all_have_no_effect(devices: object) -> None:
    finding = only(check(time_slicing(devices=devices)), f"{RESOURCE}.devices")
    assert "has no effect" in finding.message and "'all'" in finding.message


def test_devices_all_is_fine() -> None:
    assert check(time_slicing(devices="all")) == []


@pytest.mark.parametrize(
    ("devices", "path"),
    [
        ("some", f"{RESOURCE}.devices"),
        (0, f"{RESOURCE}.devices"),
        ([], f"{RESOURCE}.devices"),
        (True, f"{RESOURCE}.devices"),
        (["x"], f"{RESOURCE}.devices[0]"),
        ([0, -1], f"{RESOURCE}.devices[1]"),
        (["MIG-GPU-abc/1"], f"{RESOURCE}.devices[0]"),
    ],
)
def test_invalid_devices(devices: object, path: str) -> None:
    findings = check(time_slicing(devices=devices))
    assert [f.path for f in findings] == [path]  # the schema finding, not also "has no effect"
    assert findings[0].message.startswith("expected ")


@pytest.mark.parametrize(("ids", "path"), [([1], "imex.channelIDs[0]"), ([0, 0], "imex.channelIDs")])
def test_imex_channel_ids(ids: list[int], path: str) -> None:
    config = time_slicing()
    config["imex"] = {"channelIDs": ids}
    assert "[] or [0]" in only(check(config), path).message


@pytest.mark.parametrize("ids", [[], [0]])
def test_imex_channel_ids_valid(ids: list[int]) -> None:
    config = time_slicing()
    config["imex"] = {"channelIDs": ids, "required": False}
    assert check(config) == []


def test_findings_sorted_and_stable() -> None:
    config = with_flags(time_slicing(replicas=1, name="X"), migStrategy="Mixed", bogus=1)
    config["zzz"] = 1
    first = check(config)
    assert first == sorted(first)
    assert first == check(copy.deepcopy(config))
    assert len(first) == 5


def test_check_does_not_mutate_the_config() -> None:
    config = with_flags(time_slicing(replicas="4", rename="x"), renameByDefault=True)
    before = copy.deepcopy(config)
    check(config)
    assert config == before


# --- the schema file -----------------------------------------------------------------------------


def _schema() -> Mapping[str, Any]:
    return schema_files.load_schema(SCHEMA_NAME)


def _subschemas(node: object, where: str = "#") -> Iterator[tuple[str, Mapping[str, Any]]]:
    if isinstance(node, Mapping):
        yield where, node
        for key, value in node.items():
            if key not in {"enum", "const", "x-since-values"}:
                yield from _subschemas(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _subschemas(value, f"{where}/{index}")


def test_schema_is_valid_draft_2020_12() -> None:
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    schema = _schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == "https://gpustack-gen.dev/schemas/device-plugin-config.schema.json"


def test_every_property_has_a_description_and_objects_are_closed() -> None:
    for where, node in _subschemas(_schema()):
        if "properties" in node and isinstance(node["properties"], Mapping):
            assert node.get("additionalProperties") is False, where
            for name, prop in node["properties"].items():
                assert isinstance(prop.get("description"), str) and prop["description"], f"{where}/{name}"


def test_x_since_annotations_are_versions_newer_than_v0_14_0() -> None:
    found = []
    for where, node in _subschemas(_schema()):
        versions = [node["x-since"]] if "x-since" in node else []
        versions += list(node.get("x-since-values", {}).values())
        for version in versions:
            parts = tuple(int(p) for p in version.lstrip("v").split("."))
            assert version.startswith("v") and parts > (0, 14, 0), where
            found.append(version)
    assert len(found) >= 10


# --- schema loader and finding helpers -----------------------------------------------------------


def test_schema_loader_caches_validators() -> None:
    assert schema_files.schema_validator(SCHEMA_NAME) is schema_files.schema_validator(SCHEMA_NAME)
    assert schema_files.load_schema(SCHEMA_NAME) is schema_files.load_schema(SCHEMA_NAME)


def test_schema_path_prefers_the_wheel_location(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheel, repo = tmp_path / "wheel", tmp_path / "repo"
    wheel.mkdir()
    repo.mkdir()
    (repo / "x.schema.json").write_text("{}")
    monkeypatch.setattr(schema_files, "_SEARCH_DIRS", (wheel, repo))
    assert schema_files.schema_path("x.schema.json") == repo / "x.schema.json"
    (wheel / "x.schema.json").write_text("{}")
    assert schema_files.schema_path("x.schema.json") == wheel / "x.schema.json"
    with pytest.raises(FileNotFoundError, match=r"missing\.schema\.json"):
        schema_files.schema_path("missing.schema.json")
    with pytest.raises(ValueError):
        schema_files.schema_path("../x.schema.json")


def test_repo_schemas_are_found(repo_root: Path) -> None:
    path = schema_files.schema_path(SCHEMA_NAME)
    assert path.read_bytes() == (repo_root / "schemas" / SCHEMA_NAME).read_bytes()
    json.loads(path.read_text(encoding="utf-8"))


def test_importing_validate_does_not_import_jsonschema() -> None:
    code = "import sys, gpustack_gen.validate; print('jsonschema' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_format_path() -> None:
    assert format_path(["sharing", "mps", "resources", 0, "name"]) == "sharing.mps.resources[0].name"
    assert format_path(["mig-configs", "all-1g.10gb", 0]) == 'mig-configs["all-1g.10gb"][0]'
    assert generic_path(["sharing", "mps", "resources", 3, "x"]) == "sharing.mps.resources[].x"
    assert format_path([]) == ""


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("4", "'4' (a string)"),
        (4, "4 (an integer)"),
        (False, "false (a boolean)"),
        (None, "null"),
        ({}, "an empty mapping"),
        ([1, 2], "a list of 2 items"),
    ],
)
def test_describe_value(value: object, shown: str) -> None:
    assert describe_value(value, with_kind=True) == shown


def test_one_of_with_a_type_list_branch_gives_a_finding() -> None:
    """A oneOf branch whose ``type`` is a list must not crash the translation (Kubernetes quantities do this)."""
    import jsonschema

    from gpustack_gen.validate.findings import schema_findings

    schema = {"oneOf": [{"type": ["string", "integer"], "pattern": "^[0-9]+$"}, {"type": "boolean"}]}
    findings = schema_findings(jsonschema.Draft202012Validator(schema), 1.5)
    assert len(findings) == 1 and "got" in findings[0].message
