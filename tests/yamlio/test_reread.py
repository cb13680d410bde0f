"""reread.py: a second version of a fleet re-read from the first is what a full read gives, or nothing.

The property: for generated fleets (block, flow and mixed styles, quoting, anchors, aliases, merges) and
edits of their text (a value, a line, a cluster added or removed, stray YAML characters), ``reread`` either
returns None or the full read's data (types and key order included) and positions; where the full read
gives up, it returns None. The cases below check that ordinary edits are re-read, and each reason the
module lists for returning None.
"""

from __future__ import annotations

import io
import random
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from yaml_texts import edit_characters, edit_lines, fleet_texts, strict

from benchmarks.fleetgen import generate_fleet
from gpustack_gen.yamlio import reread as reread_module
from gpustack_gen.yamlio.fast_reader import GiveUp
from gpustack_gen.yamlio.reread import Reading, keep_reading, reread
from gpustack_gen.yamlio.source import _fast_parse

PIECES = [" ", ":", ": ", "- ", "#", "'", '"', "[", "]", "{", "}", ",", "&a ", "*a", "<<: ", "\n", "\n  ", "|"]
PIECES += ["\n- ", "\ndefaults: {}\n", "0", "true", "---", "\n  - name: x\n", "\n    x: 1\n", "\r\n"]


def _reading(text: str) -> Reading:
    reading = keep_reading(text)[3]
    assert reading is not None
    return reading


def _assert_full_read(text: str, reading: Reading, *, expect_reread: bool = False) -> None:
    old_items = list(reading.data.get("clusters", []))
    found = reread(reading, text)
    try:
        full = _fast_parse(text, "fleet.yaml")
    except GiveUp:
        assert found is None
        return
    if found is None:
        assert not expect_reread
        return
    assert strict(found.data) == strict(full.data)
    assert dict(found.value_positions) == full.value_positions
    assert dict(found.key_positions) == full.key_positions
    assert all(path in found.value_positions for path in full.value_positions)
    assert ("clusters", len(full.data["clusters"]), "name") not in found.value_positions
    assert all(found.data["clusters"][index] is old_items[index] for index in found.kept_items)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(fleet_texts(clusters=st.integers(2, 4)), st.randoms(use_true_random=False), st.booleans())
def test_an_edited_fleet_is_re_read_as_a_full_read_reads_it_or_not_at_all(
    case: tuple[dict[str, Any], str], rng: random.Random, by_line: bool
) -> None:
    _, old = case
    reading = keep_reading(old)[3]
    if reading is None:  # a flow-style cluster list: nothing to re-read from
        return
    new = edit_lines(old, rng) if by_line else edit_characters(old, rng, PIECES)
    _assert_full_read(new, reading)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.integers(0, 2**32 - 1), st.integers(5, 8), st.data())
def test_a_cluster_changed_added_or_removed_in_a_dumped_fleet_is_re_read(seed: int, count: int, data: Any) -> None:
    fleet = generate_fleet(count, seed=seed)
    old = _dump(fleet)
    index = data.draw(st.integers(0, count - 1))
    edit = data.draw(st.sampled_from(["change", "add", "remove"]))
    changed = generate_fleet(count, seed=seed)
    if edit == "change":
        changed["clusters"][index]["nodePools"][0]["nodes"] += 1
    elif edit == "add":
        changed["clusters"].insert(index, {**changed["clusters"][index], "name": "added"})
    else:
        del changed["clusters"][index]
    reading = _reading(old)
    _assert_full_read(_dump(changed), reading, expect_reread=True)


def _dump(data: dict[str, Any], *, indent: bool = False) -> str:
    yaml = YAML()
    if indent:
        yaml.indent(mapping=2, sequence=4, offset=2)
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def test_the_clusters_a_change_leaves_alone_are_the_first_documents_objects_moved_by_the_lines_added() -> None:
    fleet = generate_fleet(4, seed=7)
    old = _dump(fleet, indent=True)
    fleet["clusters"][1]["nodePools"][0]["labels"] = {"team": "a", "tier": "b"}  # two more lines
    new = _dump(fleet, indent=True)
    reading = _reading(old)
    old_positions = dict(reading.value_positions)

    found = reread(reading, new)

    assert found is not None and found.kept_items == {0, 2, 3}
    full = _fast_parse(new, "fleet.yaml")
    assert strict(found.data) == strict(full.data)
    assert dict(found.value_positions) == full.value_positions
    path = ("clusters", 3, "name")
    assert found.value_positions[path] == (old_positions[path][0] + 3, old_positions[path][1])


def test_the_same_text_is_the_first_document() -> None:
    text = _dump(generate_fleet(2, seed=1))
    reading = _reading(text)

    found = reread(reading, text)

    assert found is not None and found.data is reading.data and found.kept_items == {0, 1}


ANCHORS = """\
apiVersion: gpustack-gen/v1alpha1
kind: Fleet
clusters:
- name: a
  nodePools:
  - name: p
    gpu: tesla-t4
    nodes: 1
    nodeSelector: &selector {pool: p}
    <<: &extra {labels: {x: y}}
- name: b
  nodePools:
  - name: p
    gpu: tesla-t4
    nodes: 2
    nodeSelector: &local {pool: q}
- name: c
  nodePools:
  - name: p
    gpu: tesla-t4
    nodes: 3
    nodeSelector: *selector
- name: d
  nodePools:
  - name: p
    gpu: tesla-t4
    nodes: 4
    nodeSelector: *local
    labels: &tail {k: v}
"""


CLUSTER_C = "- name: c\n  nodePools:\n  - name: p\n    gpu: tesla-t4\n    nodes: 3\n    nodeSelector: *selector\n"


def _indented(text: str) -> str:
    return "".join("  " + line for line in text.splitlines(keepends=True))


def test_an_alias_to_a_collection_before_the_change_is_re_read() -> None:
    new = ANCHORS.replace("nodes: 3", "nodes: 30")
    _assert_full_read(new, _reading(ANCHORS), expect_reread=True)


@pytest.mark.parametrize(
    ("reason", "new"),
    [
        ("a change outside the cluster list", ANCHORS.replace("kind: Fleet", "kind: Fleet\ndefaults: {}")),
        ("an anchor of the old run aliased after it", ANCHORS.replace("nodes: 2", "nodes: 20")),
        ("an anchor defined again before the new run", ANCHORS.replace("nodes: 3", "nodes: 3\n    x: &local 1")),
        ("an anchor defined again after the new run", ANCHORS.replace("nodes: 3", "nodes: 3\n    x: &tail 1")),
        ("a collection the walk first converts in the run", ANCHORS.replace("nodes: 3", "nodes: 3\n    y: *extra")),
        ("a line left of the dashes", ANCHORS.replace("- name: c", "note: 1\n- name: c")),
        ("a CR", ANCHORS.replace("nodes: 3", "nodes: 3\r")),
        ("a character the reader refuses, in the run", ANCHORS.replace("nodes: 3", "nodes: 3\u2028")),
        ("a run that does not parse", ANCHORS.replace("nodes: 3", "nodes: [3")),
        # The full read gives up on the alias `*selector-`; the run alone would read `*selector`.
        ("the run's last line going on into the next item", ANCHORS.replace("*selector\n", "*selector")),
        ("a change across most of the list", ANCHORS.replace("nodes: 1", "nodes: 10").replace("nodes: 4", "nodes: 40")),
        # Indented, cluster c parses on its own as a list, but in the file it continues b's nodePools.
        ("a run that starts right of the dashes", ANCHORS.replace(CLUSTER_C, _indented(CLUSTER_C))),
    ],
)
def test_what_cannot_be_shown_the_same_is_not_re_read(reason: str, new: str) -> None:
    assert CLUSTER_C in ANCHORS
    assert reread(_reading(ANCHORS), new) is None, reason


def test_lines_added_at_the_end_of_a_cluster_are_re_read_with_that_cluster() -> None:
    # The texts differ from the next cluster's dash line on: the run starts one item earlier.
    new = ANCHORS.replace("*selector\n", "*selector\n    labels: {z: w}\n")
    _assert_full_read(new, _reading(ANCHORS), expect_reread=True)


FIRST_USE = """\
apiVersion: gpustack-gen/v1alpha1
kind: Fleet
clusters:
- name: a
  <<: {sel: &s {k: v}}
  sel: 1
- name: b
  x: *s
- name: c
  y: *s
"""
# &s is overridden where it is defined, and &m's values are merged, not converted: the walk first converts
# them in b, and without b's use in c, whose positions the first document does not hold.
FIRST_MERGE = FIRST_USE.replace("{sel: &s {k: v}}", "&m {sel: {k: v}}").replace("*s", "{<<: *m}")


@pytest.mark.parametrize("text", [FIRST_USE, FIRST_MERGE])
def test_a_first_use_of_an_anchor_removed_from_the_run_is_not_re_read(text: str) -> None:
    new = re.sub(r"(- name: b\n)  x: .*\n", r"\1  z: 1\n", text)
    assert new != text
    assert reread(_reading(text), new) is None


def test_a_later_use_of_an_anchor_is_re_read() -> None:
    _assert_full_read(FIRST_USE.replace("name: c", "name: cc"), _reading(FIRST_USE), expect_reread=True)


@pytest.mark.parametrize("after", ["other: *c\n", "defaults:\n  <<: *c\n", ""])
def test_an_anchored_cluster_list_is_not_kept_for_a_re_read(after: str) -> None:
    # An alias to the list, after it or inside it, would repeat the first document's list.
    text = "apiVersion: gpustack-gen/v1alpha1\nkind: Fleet\nclusters: &c\n- name: a\n- name: b\n" + after
    assert keep_reading(text)[3] is None


def test_a_last_line_without_a_line_break_is_a_changed_line() -> None:
    first_line, start, after, end = reread_module._changed_lines("a: 1\nb: 2", "a: 1\nb: 3")
    assert (first_line, start, after, end) == (2, 5, 3, 9)


def test_a_run_that_no_longer_starts_with_its_dash_is_not_re_read() -> None:
    # The item's dash removed: its lines would join the item before.
    new = ANCHORS.replace("- name: c\n  nodePools:", "  other: c\n  nodePools:")
    assert reread(_reading(ANCHORS), new) is None


def test_a_flow_style_cluster_list_is_not_kept_for_a_re_read() -> None:
    text = "apiVersion: gpustack-gen/v1alpha1\nkind: Fleet\nclusters: [{name: a}, {name: b}]\n"
    assert keep_reading(text)[3] is None


@pytest.mark.parametrize("budget", ["MAX_NODES", "EVENT_BUDGET"])
def test_a_re_read_past_a_budget_is_left_to_the_full_read(budget: str, monkeypatch: pytest.MonkeyPatch) -> None:
    reading = _reading(ANCHORS)
    # The budget set to exactly what the first document takes: an edit that adds nothing still fits.
    limit = max(reading.nodes, reading.expansion) if budget == "MAX_NODES" else reading.events
    monkeypatch.setattr(reread_module, budget, limit)
    assert reread(_reading(ANCHORS), ANCHORS.replace("nodes: 3", "nodes: 4")) is not None
    assert reread(reading, ANCHORS.replace("nodes: 3", "nodes: 3\n    extra: [1, 2, 3]")) is None


def test_an_old_run_that_does_not_read_back_as_the_first_document_had_it_is_not_re_read() -> None:
    reading = _reading(ANCHORS)
    reading.data["clusters"][2] = {"name": "tampered"}
    assert reread(reading, ANCHORS.replace("nodes: 3", "nodes: 30")) is None


def test_a_released_reading_calls_back_and_re_reads_nothing() -> None:
    reading = _reading(ANCHORS)
    calls: list[str] = []
    reading.when_released(lambda: calls.append("released"))

    reading.release()

    assert calls == ["released"] and reading.data == {} and reread(reading, ANCHORS) is None
