"""The YAML emitter: every string reads back as the same string, under YAML 1.2 and YAML 1.1 readers."""

from __future__ import annotations

import io
from typing import Any

import pytest
from ruamel.yaml import YAML

from gpustack_gen.compile.artifact import EmbeddedYaml
from gpustack_gen.emit import dump_yaml, header
from gpustack_gen.emit.header import GENERATED_MARKER

# Strings that a plain scalar would turn into something else in YAML 1.2 (ruamel, go-yaml v3) or
# YAML 1.1 (PyYAML, sigs.k8s.io/yaml as kubectl and Helm use it).
# fmt: off
LOOK_ALIKES = [
    "1", "-1", "+1", "0", "007", "017", "0o17", "0x20B010DE", "0b101", "1_000", "1:30", "190:20:30",
    "1.29", "1.", ".5", "1e3", "1.0e+3", "-.inf", ".inf", ".NaN", "true", "True", "TRUE", "false",
    "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", "y", "Y", "n", "N",
    "null", "Null", "NULL", "~", "", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "=", "<<",
]
AWKWARD = [
    " leading", "trailing ", "a: b", "a #b", "#comment", "- item", "-", "?", ":", "[1]", "{a: 1}", "!tag",
    "&anchor", "*alias", "|", ">", "@x", "`x", "%x", "'", '"', "---", "...", "--- x", "nvidia.com/gpu",
    "300m", "3Gi", "v25.3.3", "1.29.15", "a\tb", "é", "\u00a0x", "\U0001f600",
]
MULTI_LINE = [
    "a\nb", "a\n", "a\nb\n", "\n", "\n\n", "x\n\n", " lead\nx\n", "trail \nx", "- a\n- b\n", "#c\nx",
    "...\nx", "--- x\ny", "a\tb\nc", "\ttab first\n",
]
ODD = ["x\r\ny", "\r", "a\x85b", "a\u2028b", "a\u2029b", "\ufeffbom", "nul\x00", "bell\x07", "esc\x1b[0m", "del\x7f"]
# fmt: on


def load_12(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(text)


def load_11(text: str) -> Any:
    yaml = YAML(typ="safe", pure=True)
    yaml.version = (1, 1)
    return yaml.load(text)


def plain(data: Any) -> Any:
    """The data a reader should get back: embedded YAML files parsed, tuples as lists."""
    if isinstance(data, EmbeddedYaml):
        return plain(data.data)
    if isinstance(data, dict):
        return {k: plain(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [plain(v) for v in data]
    return data


def unembed(data: Any, embedded_keys: set[str]) -> Any:
    if isinstance(data, dict):
        return {k: load_12(v) if k in embedded_keys else unembed(v, embedded_keys) for k, v in data.items()}
    return data


@pytest.mark.parametrize("text", LOOK_ALIKES + AWKWARD + MULTI_LINE + ODD)
def test_every_string_reads_back_as_itself_as_a_value_and_as_a_key(text: str) -> None:
    data = {"value": text, text: "key", "list": [text]}
    dumped = dump_yaml(data)
    assert load_12(dumped) == data
    assert load_11(dumped) == data


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_strings_that_look_like_other_types_are_double_quoted(text: str) -> None:
    assert dump_yaml({"k": text}) == f'k: "{text}"\n'


@pytest.mark.parametrize("text", ["prod", "nvidia.com/gpu", "300m", "3Gi", "v25.3.3", "1.29.15", "all-balanced"])
def test_ordinary_strings_stay_plain(text: str) -> None:
    assert dump_yaml({"k": text}) == f"k: {text}\n"


def test_pyyaml_reads_the_look_alikes_back_as_strings() -> None:
    pyyaml = pytest.importorskip("yaml")
    data = {text: text for text in LOOK_ALIKES + ODD}
    assert pyyaml.safe_load(dump_yaml(data)) == data


@pytest.mark.parametrize("text", ["a\nb", "line one\nline two\n", "version: v1\nflags:\n  migStrategy: single\n"])
def test_multi_line_strings_use_literal_blocks(text: str) -> None:
    dumped = dump_yaml({"k": text})
    assert dumped.startswith("k: |")
    assert "\\n" not in dumped
    assert load_12(dumped) == {"k": text}


@pytest.mark.parametrize("text", ODD)
def test_line_breaks_other_than_newline_and_control_characters_are_escaped(text: str) -> None:
    dumped = dump_yaml({"k": text})
    assert dumped.startswith('k: "')
    assert dumped.count("\n") == 1
    assert load_12(dumped) == {"k": text}


def test_types_other_than_strings_keep_their_type() -> None:
    data = {"int": 4, "zero": 0, "big": 10**18, "neg": -3, "t": True, "f": False, "none": None, "list": [1, "1"]}
    assert load_12(dump_yaml(data)) == data
    assert load_11(dump_yaml(data)) == data


def test_nested_embedded_yaml_round_trips() -> None:
    inner = {
        "version": "v1",
        "flags": {"migStrategy": "single"},
        "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}},
        "tricky": ["on", "1.29", "0x20B010DE", "a\nb", "x\r\ny"],
    }
    document = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "labels": {"app.kubernetes.io/managed-by": "gpustack-gen"}},
        "data": {"time-slicing-4": EmbeddedYaml(inner), "nested": EmbeddedYaml({"inner": EmbeddedYaml(inner)})},
    }
    dumped = dump_yaml(document)
    loaded = load_12(dumped)
    assert isinstance(loaded["data"]["time-slicing-4"], str)
    assert load_12(loaded["data"]["time-slicing-4"]) == inner
    assert load_12(load_12(loaded["data"]["nested"])["inner"]) == inner
    assert unembed(loaded, {"time-slicing-4"})["data"]["time-slicing-4"] == plain(document)["data"]["time-slicing-4"]
    assert "time-slicing-4: |\n    version: v1\n" in dumped


def test_the_output_is_stable_and_keeps_key_order() -> None:
    data = {"zeta": 1, "alpha": {"b": 2, "a": 1}, "mid": ["x", "z"]}
    dumped = dump_yaml(data)
    assert dumped == dump_yaml(data)
    assert dumped == "zeta: 1\nalpha:\n  b: 2\n  a: 1\nmid:\n- x\n- z\n"


@pytest.mark.parametrize(
    "name",
    [
        "fleet.yaml\napiVersion: v1",
        "fleet.yaml\r\nkind: Secret",
        "fleet\x85kind: x",
        "fleet\u2028kind: x",
        "fleet\u2029kind: x",
        "fleet\x0bkind: x",
        "fleet\x00\x07\x1b.yaml",
        "f\udcff.yaml",  # an undecodable byte in the file name (surrogateescape)
        "fleet\ufeff.yaml",
    ],
)
def test_a_source_or_cluster_name_cannot_break_out_of_the_header_comment(name: str) -> None:
    text = header(name, name, (name,))
    assert text.startswith(GENERATED_MARKER + "\n")
    lines = text.split("\n")
    assert lines[-1] == "" and len(lines) == 4
    assert all(line.startswith("# ") for line in lines[:-1])
    assert all(c.isprintable() for line in lines for c in line)
    text.encode("utf-8")  # writable as UTF-8
    body = text + "key: value\n"
    assert load_12(body) == {"key": "value"}
    assert load_11(body) == {"key": "value"}
    assert YAML(typ="safe", pure=True).load(io.StringIO(body)) == {"key": "value"}


def test_an_undecodable_file_name_byte_is_shown_as_that_byte() -> None:
    assert "f\\xff.yaml" in header("f\udcff.yaml", "prod", ())
