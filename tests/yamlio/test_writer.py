"""The YAML emitter: every string reads back as the same string, under YAML 1.2 and YAML 1.1 readers."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from gpustack_gen.compile.artifact import EmbeddedYaml
from gpustack_gen.emit import dump_yaml, header
from gpustack_gen.emit.header import GENERATED_MARKER
from gpustack_gen.yamlio.writer import _ODD_CHARACTERS, dump_yaml_reference, fast_dump_yaml, needs_escapes

REPO_ROOT = Path(__file__).resolve().parent.parent.parent

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


# --- the fast writer against ruamel ---------------------------------------------------------------------

# Pieces of strings that change how YAML writes or reads a scalar: YAML 1.1 booleans and nulls, numbers,
# hex, sexagesimal, indicators at the start and inside, quotes, escapes, spaces, breaks, non-ASCII.
# fmt: off
PIECES = [
    *LOOK_ALIKES, *AWKWARD, "a", "b", "Z", "x", "0", "1", "9", ".", "-", "_", "/", ":", " ", ": ", " #", "#",
    "'", '"', "\\", "\n", "\n\n", "\t", "0x", "0X1F", "0o", "e", "E5", "+", "~", "yes", "on", "off", ",",
    "[", "]", "{", "}", "?", "? ", "!", "&", "*", "|", ">", "%", "@", "`", "=", "<<", "---", "...", "- ",
    "é", "\u00a0", "\u2028", "\x85", "\r", "\x7f", "\U0001f600", "日本",
]
# fmt: on
TRICKY_TEXT = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=5).map("".join),
    st.text(st.characters(codec="utf-8"), max_size=12),
    st.sampled_from(PIECES),
)
SCALARS = st.one_of(
    TRICKY_TEXT,
    st.integers(min_value=-(10**20), max_value=10**20),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False),
)
KEYS = st.one_of(TRICKY_TEXT, st.integers(0, 99), st.sampled_from(["apiVersion", "kind", "nvidia.com/gpu", "1g.10gb"]))
# The same tricks within printable ASCII and newlines, where the fast writer mostly takes the document on:
# this is what tests its quoting decisions rather than its fallbacks.
ASCII_PIECES = [p for p in PIECES if p.replace("\n", "").isascii() and p.replace("\n", "").isprintable()]
ASCII_TEXT = st.one_of(
    st.lists(st.sampled_from(ASCII_PIECES), min_size=1, max_size=5).map("".join),
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=12),
)
ASCII_SCALARS = st.one_of(ASCII_TEXT, st.integers(), st.booleans(), st.none())


def _containers(keys: st.SearchStrategy[Any]) -> Any:
    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.lists(children, max_size=4),
            st.lists(children, max_size=3).map(tuple),
            st.dictionaries(keys, children, max_size=4),
            st.dictionaries(keys, children, max_size=3).map(EmbeddedYaml),
        )

    return extend


PLAIN_DATA = st.recursive(SCALARS, _containers(KEYS), max_leaves=24)
DOCUMENTS = st.one_of(st.dictionaries(KEYS, PLAIN_DATA, min_size=1, max_size=5), st.lists(PLAIN_DATA, max_size=4))
ASCII_DATA = st.recursive(ASCII_SCALARS, _containers(ASCII_TEXT), max_leaves=24)
ASCII_DOCUMENTS = st.one_of(
    st.dictionaries(ASCII_TEXT, ASCII_DATA, min_size=1, max_size=5), st.lists(ASCII_DATA, max_size=4)
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(DOCUMENTS, ASCII_DOCUMENTS))
def test_the_fast_writer_writes_what_ruamel_writes_or_steps_aside(data: Any) -> None:
    reference = dump_yaml_reference(data)
    fast = fast_dump_yaml(data)
    event("fast" if fast is not None else "fallback")
    assert fast is None or fast == reference
    assert dump_yaml(data) == reference


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(TRICKY_TEXT, ASCII_TEXT), min_size=1, max_size=4))
def test_the_fast_writer_on_tricky_strings_as_keys_values_and_items(texts: list[str]) -> None:
    data = {"value": texts[0], texts[-1]: "key", "list": texts, "nested": {t: t for t in texts}}
    fast = fast_dump_yaml(data)
    event("fast" if fast is not None else "fallback")
    assert fast is None or fast == dump_yaml_reference(data)


@given(st.text(st.characters(codec="utf-8")))
def test_needs_escapes_is_any_non_printable_character_but_newline(text: str) -> None:
    expected = any(c in _ODD_CHARACTERS or (c != "\n" and not c.isprintable()) for c in text)
    assert needs_escapes(text) is expected


# Shapes at the edges of what the fast writer takes on: long keys (ruamel writes `? key` from 128
# characters), lines near ruamel's width (4096), empty and nested collections, literal-block chomping.
EDGES: list[Any] = [
    *({"k" * n: 1} for n in (99, 100, 101, 120, 127, 128, 140)),
    *({"1" * n: 1} for n in (95, 100, 123, 128)),
    {"k": "word " * 300 + "end"},
    {"k": "x" * 1024, "l": ["y" * 1025]},
    {"k": "a b " * 1100},
    {"k": {}, "l": [], "m": [{}], "n": [[]], "o": [[1, 2], [3]], "p": [{"a": []}, {"b": {}}]},
    [{"a": 1, "b": [1, {"c": "d"}]}, "x", 3, None, True],
    {"k": "a\nb", "l": "a\n", "m": "a\n\n", "n": "\n", "o": " a\nb", "p": "a\n b\n", "q": "a \nb"},
    {"l": ["a\nb"], "d": [{"k": "a\nb\n", "j": {"i": "x\ny\n"}}]},
    {"embedded": EmbeddedYaml({"version": "v1", "sharing": {"timeSlicing": {"resources": [{"replicas": 4}]}}})},
    {"": "empty key", "e": ""},
    {"k": 1.5, "j": 10**30},
]


@pytest.mark.parametrize("data", EDGES, ids=range(len(EDGES)))
def test_the_fast_writer_at_the_edges(data: Any) -> None:
    fast = fast_dump_yaml(data)
    assert fast is None or fast == dump_yaml_reference(data)
    assert dump_yaml(data) == dump_yaml_reference(data)


def test_the_fast_writer_takes_the_ordinary_shapes() -> None:
    document = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "labels": {"app.kubernetes.io/managed-by": "gpustack-gen"}},
        "data": {"time-slicing-4": EmbeddedYaml({"version": "v1", "flags": {"migStrategy": "none"}})},
        "list": [{"a": "1", "b": "it's"}, "on", "a: b", "#x", "x #y", "image:tag", None, True, 0],
        "empty": {},
    }
    fast = fast_dump_yaml(document)
    assert fast is not None
    assert fast == dump_yaml_reference(document)


def _with_embedded(document: Any) -> Iterator[Any]:
    """The document and every YAML file embedded in it (each is emitted as its own document)."""
    yield document
    if isinstance(document, EmbeddedYaml):
        yield from _with_embedded(document.data)
    elif isinstance(document, dict):
        for value in document.values():
            if isinstance(value, EmbeddedYaml | dict | list | tuple):
                yield from (d for d in _with_embedded(value) if d is not value or isinstance(value, EmbeddedYaml))
    elif isinstance(document, list | tuple):
        for item in document:
            yield from (d for d in _with_embedded(item) if d is not item or isinstance(item, EmbeddedYaml))


@pytest.mark.parametrize(("clusters", "seed"), [(3, 1), (5, 7), (10, 20240601), (4, 99)])
def test_every_document_of_generated_fleets_takes_the_fast_writer(clusters: int, seed: int) -> None:
    if str(REPO_ROOT) not in sys.path:  # benchmarks/ is not part of the installed package
        sys.path.insert(0, str(REPO_ROOT))
    from benchmarks.fleetgen import generate_fleet
    from gpustack_gen import load_fleet, render

    bundle = render(load_fleet(generate_fleet(clusters, seed=seed)))
    checked = 0
    for rendered in bundle.values():
        for document in rendered.documents:
            for part in _with_embedded(document):
                data = part.data if isinstance(part, EmbeddedYaml) else part
                if not isinstance(data, dict) and part is not document:
                    continue
                fast = fast_dump_yaml(data)
                assert fast is not None, f"{rendered.path}: fell back to ruamel"
                assert fast == dump_yaml_reference(data), rendered.path
                checked += 1
    assert checked > 20 * clusters


@given(st.lists(st.one_of(st.text(max_size=6), st.sampled_from(["\udcff", "\udc80", "\n", "\x85", "\x00", " "]))))
def test_the_header_line_fast_path_changes_nothing(pieces: list[str]) -> None:
    from gpustack_gen.emit.header import _one_line
    from gpustack_gen.inert import escape_char

    text = "".join(pieces)
    assert _one_line(text) == "".join(c if c.isprintable() else escape_char(c) for c in " ".join(text.split()))
    assert _one_line(text).isprintable()
