"""source.py: YAML loading with positions, and the refusal of hostile or surprising input."""

from __future__ import annotations

from pathlib import Path

import pytest
from fleet_text import BASE, edit, load, problems

from gpustack_gen.errors import FleetError, Problem
from gpustack_gen.model import load_fleet
from gpustack_gen.yamlio.limits import MAX_DEPTH, MAX_FLEET_BYTES, MAX_NODES
from gpustack_gen.yamlio.source import format_path, read_source


def only(text: str) -> Problem:
    (problem,) = problems(text)
    return problem


def test_positions_of_values_and_keys() -> None:
    doc = read_source(BASE, name="fleet.yaml")
    assert doc.locate(("clusters", 0, "nodePools", 0, "gpu")) == (12, 14)
    assert doc.locate(("clusters", 0, "nodePools", 0, "gpu"), key=True) == (12, 9)
    assert doc.locate(("clusters", 0, "workloads", 0, "pool")) == (18, 42)
    assert doc.locate(("clusters", 0, "nodePools", 0, "nosuchfield")) == (11, 9)  # nearest ancestor


def test_format_path_quotes_keys_with_dots() -> None:
    assert format_path(("clusters", 0, "nodePools", 1, "sharing", "layout", "1g.10gb")) == (
        'clusters[0].nodePools[1].sharing.layout["1g.10gb"]'
    )
    assert format_path(("defaults", "sharing", "tesla-t4")) == "defaults.sharing.tesla-t4"


def test_a_path_string_without_newline_or_colon_is_read_as_a_file(tmp_path: Path) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text(BASE)
    assert load_fleet(str(path)).clusters[0].name == "prod"


def test_missing_file() -> None:
    with pytest.raises(FleetError) as caught:
        load_fleet(Path("no/such/fleet.yaml"))
    assert caught.value.problems[0].format() == "no/such/fleet.yaml: cannot read file: No such file or directory"


def test_bom_and_crlf_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + BASE.replace("\n", "\r\n").encode())
    assert load_fleet(path).clusters[0].pools[0].gpu.id == "tesla-t4"


def test_crlf_positions_are_unchanged() -> None:
    problem = only(edit({12: "gpu: tesla-t5"}).replace("\n", "\r\n"))
    assert (problem.line, problem.column) == (12, 14)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_bytes(BASE.replace("prod", "pr\xe9d").encode("latin-1"))
    with pytest.raises(FleetError) as caught:
        load_fleet(path)
    assert (
        caught.value.problems[0].format()
        == "fleet.yaml:6:13: not valid UTF-8 (byte 0xe9) (hint: save the file as UTF-8)"
    )


def test_utf16_says_so(tmp_path: Path) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_bytes(BASE.encode("utf-16"))
    with pytest.raises(FleetError) as caught:
        load_fleet(path)
    assert "UTF-16 byte-order mark" in caught.value.problems[0].hint


def test_control_character() -> None:
    problem = only(BASE.replace("prod", "pr\x00d"))
    assert problem.format() == (
        "fleet.yaml:6:13: the file contains the control character U+0000, which YAML does not allow "
        "(hint: remove it; a fleet file is plain text)"
    )


def test_duplicate_key_names_the_key_and_both_lines() -> None:
    problem = only(edit({13: "nodes: 2\nnodes: 3"}))
    assert problem.format() == (
        "fleet.yaml:14:9: clusters[0].nodePools[0].nodes: duplicate key 'nodes': first at line 13, again at line 14 "
        "(hint: a key may appear once per mapping; remove one of them)"
    )


def test_duplicate_key_in_a_flow_mapping() -> None:
    problem = only(edit({15: "nodeSelector: {pool: a, pool: b}"}))
    assert (problem.line, problem.column, problem.path) == (15, 33, "clusters[0].nodePools[0].nodeSelector.pool")
    assert "first at line 15, again at line 15" in problem.message


def test_tab_indentation() -> None:
    problem = only(BASE.replace("        nodes: 2", "\tnodes: 2"))
    assert (
        problem.format()
        == "fleet.yaml:13:1: invalid YAML: a tab character is used for indentation (hint: YAML indents with spaces only)"
    )


def test_unclosed_flow_mapping_points_at_its_start() -> None:
    problem = only(edit({15: "nodeSelector: {pool: pool"}))
    assert problem.message == "invalid YAML: expected ',' or '}', but got ':'"
    assert problem.hint == "see the flow mapping that starts at line 15, column 23"


def test_several_documents() -> None:
    problem = only(BASE + "---\n" + BASE)
    assert problem.format() == (
        "fleet.yaml:20:1: found 2 YAML documents; a fleet file holds exactly one "
        "(hint: remove the '---' separators, or put each fleet in its own file)"
    )


def test_explicit_document_markers_are_fine() -> None:
    assert load("---\n" + BASE + "...\n").clusters[0].name == "prod"


@pytest.mark.parametrize(
    ("text", "kind"), [("", None), ("# nothing\n", None), ("- a\n- b\n", "a list"), ("fleet\n", "a string")]
)
def test_empty_file_and_wrong_top_level(text: str, kind: str | None) -> None:
    problem = only(text)
    if kind is None:
        assert (
            problem.format()
            == "fleet.yaml:1:1: the file is empty (hint: start from `gpustack-gen init` or examples/fleet.yaml)"
        )
    else:
        assert problem.message == f"the top level is {kind}; expected a mapping"
        assert "apiVersion" in problem.hint


def test_yaml_1_1_directive_is_refused() -> None:
    problem = only("%YAML 1.1\n---\n" + BASE)
    assert (problem.line, problem.column) == (1, 1)
    assert problem.message == "the %YAML 1.1 directive is not supported; fleet files are YAML 1.2"
    assert "yes/no/on/off" in problem.hint


@pytest.mark.parametrize(
    ("value", "message", "hint"),
    [
        ("0o17", "the integer 0o17 is written in base 8", "write 15 in decimal"),
        ("0x10", "the integer 0x10 is written in base 16", "write 16 in decimal"),
        ("012", "the integer 012 has a leading zero (YAML 1.1 reads it as octal)", "write 12 without leading zeros"),
        ("1_000", "the integer is written with '_' separators (a YAML 1.1 form)", "write 1000"),
    ],
)
def test_integer_forms_that_yaml_versions_disagree_on(value: str, message: str, hint: str) -> None:
    problem = only(edit({13: f"nodes: {value}"}))
    assert (problem.line, problem.column, problem.path) == (13, 16, "clusters[0].nodePools[0].nodes")
    assert problem.message == message
    assert hint in problem.hint


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("!!python/object:os.system tesla-t4", "!!python/object:os.system"),
        ("!custom tesla-t4", "!custom"),
        ("!!binary dGVzbGEtdDQ=", "!!binary"),
    ],
)
def test_tags_are_refused(value: str, shown: str) -> None:
    problem = only(edit({12: f"gpu: {value}"}))
    assert problem.format() == (
        f"fleet.yaml:12:14: clusters[0].nodePools[0].gpu: the YAML tag {shown} is not allowed "
        "(hint: remove the tag and write the plain value)"
    )


def test_the_str_tag_is_a_plain_string() -> None:
    assert load(edit({7: "kubernetes: !!str 1.29.15"})).clusters[0].kubernetes == "1.29.15"


@pytest.mark.parametrize(("key", "shown"), [("1", "the integer 1"), ("true", "the boolean true"), ("null", "null")])
def test_mapping_keys_must_be_strings(key: str, shown: str) -> None:
    problem = only(edit({15: f"nodeSelector: {{{key}: x}}"}))
    assert (problem.line, problem.column, problem.path) == (15, 24, "clusters[0].nodePools[0].nodeSelector")
    assert problem.message == f"a mapping key must be a string, got {shown}"
    assert problem.hint.startswith("quote it")


def test_anchors_aliases_and_merge_keys_are_allowed() -> None:
    text = edit({11: "- &t4\n  name: pool", 18: "- {name: app, namespace: ml, pool: pool}"}).replace(
        "    workloads:", "      - <<: *t4\n        name: other\n        nodeSelector: {pool: other}\n    workloads:"
    )
    pools = load(text).clusters[0].pools
    assert [(p.name, p.gpu.id, p.nodes) for p in pools] == [("pool", "tesla-t4", 2), ("other", "tesla-t4", 2)]


def test_alias_bomb_is_refused() -> None:
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    lines += [f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]" for i in range(8)]
    problem = only("\n".join(lines) + "\n")
    assert problem.format() == (
        f"fleet.yaml:7:1: g: the document expands to more than {MAX_NODES:,} values (aliases included) "
        "(hint: an alias bomb, or a fleet too large for one file: split it)"
    )


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("clusters: " + "[" * 1000 + "]" * 1000 + "\n", (1, 11 + MAX_DEPTH)),
        ("clusters: " + "{a: " * 1000 + "1" + "}" * 1000 + "\n", (1, 11 + 4 * MAX_DEPTH)),
        ("clusters:\n" + "".join("  " * i + "- \n" for i in range(1, 1000)), (MAX_DEPTH, 2 * MAX_DEPTH - 1)),
    ],
    ids=["flow-sequences", "flow-mappings", "block"],
)
def test_deep_nesting_is_refused_before_parsing(text: str, where: tuple[int, int]) -> None:
    problem = only(text)
    assert (problem.line, problem.column) == where
    assert problem.message == f"nesting deeper than {MAX_DEPTH} levels"


def test_nesting_by_aliases_is_refused() -> None:
    text = (
        "a: &a "
        + "[" * 40
        + "]" * 40
        + "\nb: &b "
        + "[*a]"
        + "\nc: [[[[[[[[[[[[[[[[[[[[[[[[[[[[*b]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n"
    )
    problem = only(text)
    assert problem.message == f"nesting deeper than {MAX_DEPTH} levels"
    assert problem.path.startswith("c[0]")


def test_oversized_text_and_file(tmp_path: Path) -> None:
    text = BASE + "#" * MAX_FLEET_BYTES + "\n"
    assert only(text).message == f"file is {len(text.encode()):,} bytes; the limit is {MAX_FLEET_BYTES:,} bytes"
    path = tmp_path / "big.yaml"
    path.write_text(text)
    with pytest.raises(FleetError) as caught:
        load_fleet(path)
    # A file is read to at most the limit and one byte more: the message gives the limit, not the size.
    assert caught.value.problems[0].format().startswith(f"big.yaml: larger than {MAX_FLEET_BYTES:,} bytes, the limit")
