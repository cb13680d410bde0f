"""mig-parted config checks: schema constraints, the profile grammar and the cross-field rules.

Configs are parsed from YAML text with ruamel.yaml's safe (YAML 1.2) loader, as a user's file would be:
in YAML 1.2 an unquoted ``0x20B010DE`` is the integer 548409566, which is exactly the mistake to catch.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from ruamel.yaml import YAML

from gpustack_gen.validate import SchemaFinding, check_mig_parted_config, schema_files
from gpustack_gen.validate.mig_parted import SCHEMA_NAME

ENTRY = "mig-configs.custom[0]"


def load(text: str) -> Any:
    return YAML(typ="safe").load(text)


def config_with(entry: str) -> Any:
    """A one-entry config ``custom`` whose entry is the given YAML flow/block text."""
    indented = "\n".join("    " + line for line in entry.strip().splitlines())
    return load(f"version: v1\nmig-configs:\n  custom:\n  - {indented.lstrip()}\n")


def only(findings: list[SchemaFinding], path: str) -> SchemaFinding:
    at_path = [f for f in findings if f.path == path]
    assert len(at_path) == 1, findings
    return at_path[0]


# --- valid configs -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "entry",
    [
        "{devices: all, mig-enabled: false}",
        "{devices: all, mig-enabled: false, mig-devices: {}}",
        "{devices: all, mig-enabled: true, mig-devices: {}}",
        '{devices: [0, 1, 7], mig-enabled: true, mig-devices: {"1g.10gb": 7}}',
        '{devices: all, mig-enabled: true, mig-devices: {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}}',
        '{devices: all, mig-enabled: true, mig-devices: {"1g.10gb": 0, "7g.80gb": 1}}',
        '{device-filter: "0x20B010DE", devices: all, mig-enabled: false}',
        '{device-filter: ["0x20B010DE", "0x20b110de"], devices: all, mig-enabled: false}',
        '{device-filter: "0x233010DE:0x16C110DE", devices: all, mig-enabled: false}',
    ],
)
def test_valid_entries(entry: str) -> None:
    assert check_mig_parted_config(config_with(entry)) == []


def test_several_configs_and_entries() -> None:
    config = load("""\
version: v1
mig-configs:
  all-disabled:
  - devices: all
    mig-enabled: false
  custom-config:
  - devices: [0, 1]
    mig-enabled: false
  - devices: [2]
    mig-enabled: true
    mig-devices:
      "1g.5gb": 7
""")
    assert check_mig_parted_config(config) == []


# --- device-filter -------------------------------------------------------------------------------


def test_unquoted_device_filter_is_a_yaml_integer_and_fails() -> None:
    config = config_with("{device-filter: 0x20B010DE, devices: all, mig-enabled: false}")
    assert config["mig-configs"]["custom"][0]["device-filter"] == 0x20B010DE  # YAML 1.2 int
    finding = only(check_mig_parted_config(config), f"{ENTRY}.device-filter")
    assert "got 548409566 (an integer)" in finding.message
    assert 'quote it: "0x20B010DE"' in finding.hint


def test_unquoted_device_filter_in_a_list() -> None:
    config = config_with('{device-filter: ["0x20B010DE", 0x20B110DE], devices: all, mig-enabled: false}')
    finding = only(check_mig_parted_config(config), f"{ENTRY}.device-filter[1]")
    assert "(an integer)" in finding.message
    assert '"0x20B110DE"' in finding.hint


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ('"20B010DE"', f"{ENTRY}.device-filter"),
        ('"0x20B010D"', f"{ENTRY}.device-filter"),
        ('"0x20B010DE:0x16C1"', f"{ENTRY}.device-filter"),
        ("[]", f"{ENTRY}.device-filter"),
        ('["0x20B010DE", "nope"]', f"{ENTRY}.device-filter[1]"),
    ],
)
def test_malformed_device_filter(value: str, path: str) -> None:
    config = config_with(f"{{device-filter: {value}, devices: all, mig-enabled: false}}")
    assert only(check_mig_parted_config(config), path).message.startswith("expected ")


# --- entry keys and types ------------------------------------------------------------------------


def test_unknown_entry_key() -> None:
    config = config_with("{devices: all, mig-enabled: false, node-selector: {gpu: a100}}")
    finding = only(check_mig_parted_config(config), f"{ENTRY}.node-selector")
    assert finding.message == "unknown key 'node-selector'"
    assert "rejects unknown keys" in finding.hint


def test_miscased_entry_key() -> None:
    config = config_with("{devices: all, mig-Enabled: false}")
    findings = check_mig_parted_config(config)
    assert "did you mean mig-configs.custom[0].mig-enabled?" in only(findings, f"{ENTRY}.mig-Enabled").message
    assert "missing required key 'mig-enabled'" in only(findings, f"{ENTRY}.mig-enabled").message


def test_unknown_top_level_key() -> None:
    config = load("version: v1\nmig-configs:\n  a: [{devices: all, mig-enabled: false}]\nmigConfigs: {}\n")
    finding = only(check_mig_parted_config(config), "migConfigs")
    assert "did you mean mig-configs?" in finding.message


def test_devices_list_must_hold_integers() -> None:
    config = config_with('{devices: [0, "1"], mig-enabled: false}')
    finding = only(check_mig_parted_config(config), f"{ENTRY}.devices[1]")
    assert "got '1' (a string)" in finding.message
    assert "remove the quotes" in finding.hint


@pytest.mark.parametrize("devices", ["ALL", "[]", "-1", "[-1]", "0"])
def test_invalid_devices(devices: str) -> None:
    findings = check_mig_parted_config(config_with(f"{{devices: {devices}, mig-enabled: false}}"))
    assert [f.path.startswith(f"{ENTRY}.devices") for f in findings] == [True]


def test_required_entry_fields() -> None:
    findings = check_mig_parted_config(config_with("{mig-devices: {}}"))
    assert "missing required key 'devices'" in only(findings, f"{ENTRY}.devices").message
    assert "missing required key 'mig-enabled'" in only(findings, f"{ENTRY}.mig-enabled").message


def test_mig_enabled_must_be_a_boolean() -> None:
    finding = only(check_mig_parted_config(config_with('{devices: all, mig-enabled: "true"}')), f"{ENTRY}.mig-enabled")
    assert "expected a boolean" in finding.message


def test_missing_top_level_keys() -> None:
    assert {f.path for f in check_mig_parted_config(load("{}"))} == {"version", "mig-configs"}


def test_version_must_be_v1() -> None:
    config = load("version: v2\nmig-configs: {a: [{devices: all, mig-enabled: false}]}")
    assert "expected 'v1'" in only(check_mig_parted_config(config), "version").message


def test_mig_configs_must_not_be_empty() -> None:
    findings = check_mig_parted_config(load("version: v1\nmig-configs: {}"))
    assert "at least 1 entry" in only(findings, "mig-configs").message
    findings = check_mig_parted_config(load("version: v1\nmig-configs: {a: []}"))
    assert "at least 1 item" in only(findings, "mig-configs.a").message


def test_config_name_must_be_a_label_value() -> None:
    config = load("version: v1\nmig-configs:\n  'my config!': [{devices: all, mig-enabled: false}]\n")
    finding = only(check_mig_parted_config(config), 'mig-configs["my config!"]')
    assert "label value" in finding.message


# --- cross-field rules ---------------------------------------------------------------------------


def test_mig_devices_with_mig_enabled_false() -> None:
    config = config_with('{devices: all, mig-enabled: false, mig-devices: {"1g.10gb": 7}}')
    finding = only(check_mig_parted_config(config), f"{ENTRY}.mig-devices")
    assert "mig-enabled is false" in finding.message


def test_mig_enabled_true_without_mig_devices() -> None:
    finding = only(check_mig_parted_config(config_with("{devices: all, mig-enabled: true}")), f"{ENTRY}.mig-devices")
    assert "required when mig-enabled is true" in finding.message
    assert "mig-devices: {}" in finding.hint


def test_all_counts_zero() -> None:
    config = config_with('{devices: all, mig-enabled: true, mig-devices: {"1g.10gb": 0, "2g.20gb": 0}}')
    finding = only(check_mig_parted_config(config), f"{ENTRY}.mig-devices")
    assert "all counts are 0" in finding.message


def test_negative_count() -> None:
    config = config_with('{devices: all, mig-enabled: true, mig-devices: {"1g.10gb": -1}}')
    finding = only(check_mig_parted_config(config), f'{ENTRY}.mig-devices["1g.10gb"]')
    assert "expected an integer >= 0, got -1" in finding.message


def test_quoted_count() -> None:
    config = config_with('{devices: all, mig-enabled: true, mig-devices: {"1g.10gb": "7"}}')
    finding = only(check_mig_parted_config(config), f'{ENTRY}.mig-devices["1g.10gb"]')
    assert "got '7' (a string)" in finding.message


# --- MIG profile grammar -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "profile",
    [
        "1g.10gb",
        "1c.2g.20gb",
        "1g.10gb+me",
        "1g.24gb-me",
        "1g.24gb+me.all",
        "1g.24gb+gfx",
        "1g.10gb+me,gfx",
        "2g.48gb-me",
        "7g.141gb",
    ],
)
def test_good_profiles(profile: str) -> None:
    config = config_with(f'{{devices: all, mig-enabled: true, mig-devices: {{"{profile}": 1}}}}')
    assert check_mig_parted_config(config) == []


@pytest.mark.parametrize(
    ("profile", "fragment"),
    [
        ("1g.10gb+me-x", "both '+' and '-'"),
        ("10gb", "invalid key '10gb'"),
        ("1g.10gb+1me", "invalid key '1g.10gb+1me'"),
        ("1g.10gb+", "invalid key"),
        ("1g.10gb+me.", "invalid key"),
        ("1g.10gb+.me", "invalid key"),
        ("1g10gb", "invalid key"),
        ("1G.10GB", "invalid key"),
        ("g.10gb", "invalid key"),
        ("1g.10gb ", "invalid key"),
        ("1g.10gb+me,me", "repeats attribute 'me'"),
    ],
)
def test_bad_profiles(profile: str, fragment: str) -> None:
    config = config_with(f'{{devices: all, mig-enabled: true, mig-devices: {{"{profile}": 1}}}}')
    findings = check_mig_parted_config(config)
    finding = only(findings, f'{ENTRY}.mig-devices["{profile}"]')
    assert fragment in finding.message
    assert len(findings) == 1


# --- the schema file -----------------------------------------------------------------------------


def _subschemas(node: object) -> Iterator[Mapping[str, Any]]:
    if isinstance(node, Mapping):
        yield node
        for key, value in node.items():
            if key not in {"enum", "const"}:
                yield from _subschemas(value)
    elif isinstance(node, list):
        for value in node:
            yield from _subschemas(value)


def test_schema_is_valid_draft_2020_12() -> None:
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    schema = schema_files.load_schema(SCHEMA_NAME)
    Draft202012Validator.check_schema(schema)
    assert schema["$id"] == "https://gpustack-gen.dev/schemas/mig-parted-config.schema.json"


def test_every_property_has_a_description_and_objects_are_closed() -> None:
    for node in _subschemas(schema_files.load_schema(SCHEMA_NAME)):
        if isinstance(node.get("properties"), Mapping):
            assert node.get("additionalProperties") is False
            for name, prop in node["properties"].items():
                assert prop.get("description"), name
