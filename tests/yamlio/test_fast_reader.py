"""fast_reader.py: the fast path reads every valid fleet exactly as the round-trip path does, or gives up.

Exactness is checked on data (types and key order included), value positions and key positions, for the
example fleets, the odd-but-valid corpus files and hypothesis-generated fleets dumped by ruamel in block and
flow styles with quoting, anchors, aliases and merge keys. Mutated texts check the other half: whenever the
fast path does not give up, the round-trip path accepts the text too and agrees with it.
"""

from __future__ import annotations

import io
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from gpustack_gen.errors import FleetError
from gpustack_gen.yamlio.fast_reader import GiveUp
from gpustack_gen.yamlio.source import (
    MAX_DETAILED_BYTES,
    MAX_FLEET_BYTES,
    SourceDocument,
    _fast_parse,
    _prescan,
    _rt_parse,
    parse_text,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # benchmarks/ is not part of the installed package
    sys.path.insert(0, str(REPO_ROOT))

from yaml_texts import edit_characters, fleet_texts, strict  # noqa: E402

from benchmarks.fleetgen import generate_fleet  # noqa: E402

FILES = [
    REPO_ROOT / "examples" / "fleet.yaml",
    REPO_ROOT / "examples" / "gitops" / "fleet.yaml",
    *sorted((REPO_ROOT / "tests" / "corpus" / "good").glob("*.yaml")),
]


def assert_same(fast: SourceDocument, slow: SourceDocument) -> None:
    assert strict(fast.data) == strict(slow.data)
    assert fast.value_positions == slow.value_positions
    assert fast.key_positions == slow.key_positions


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8-sig")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
@pytest.mark.parametrize("pure", [False, True], ids=["c-parser", "pure-parser"])
def test_example_fleets_read_the_same(path: Path, pure: bool) -> None:
    text = read(path)
    assert_same(_fast_parse(text, path.name, pure=pure), _rt_parse(text, path.name))


def test_anchors_aliases_and_merges_locate_like_the_round_trip_path() -> None:
    text = read(REPO_ROOT / "tests" / "corpus" / "good" / "anchors.yaml")
    doc = _fast_parse(text, "anchors.yaml")
    stage_pool = ("clusters", 1, "nodePools", 0)
    assert doc.data["clusters"][1]["nodePools"][0]["gpu"] == "tesla-t4"  # merged
    assert (*stage_pool, "gpu") not in doc.key_positions  # merged keys have no position of their own
    assert doc.key_positions[(*stage_pool, "nodes")] == (24, 9)  # explicit keys do
    assert ("clusters", 1, "workloads", 0, "name") not in doc.value_positions  # second use of an alias


# -- generated fleets ------------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(fleet_texts())
def test_generated_fleets_read_the_same(case: tuple[dict[str, Any], str]) -> None:
    fleet, text = case
    fast = _fast_parse(text, "fleet.yaml")
    assert fast.data == fleet  # anchors, aliases and merges kept the data
    assert_same(fast, _rt_parse(text, "fleet.yaml"))
    assert_same(_fast_parse(text, "fleet.yaml", pure=True), fast)


# -- mutated texts: the fast path gives up, or agrees --------------------------------------------------------

PIECES = [" ", "\t", ":", ": ", "- ", "#", " #", "'", '"', "[", "]", "{", "}", ",", "&a ", "*a", "!!str ", "<<: "]
PIECES += ["\n", "\n  ", "? ", "|", ">", "%", "0", "_", "\\", "~", "", "true", "1.5", "0o7", "2024-01-01", "\r", "---"]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(FILES), st.randoms(use_true_random=False))
def test_mutated_fleets_give_up_or_read_the_same(path: Path, rng: random.Random) -> None:
    text = edit_characters(read(path), rng, PIECES)
    if _prescan(text, "fleet.yaml") is not None:
        return
    try:
        fast = _fast_parse(text, "fleet.yaml")
    except GiveUp:
        return
    assert_same(fast, _rt_parse(text, "fleet.yaml"))


# -- what the fast path gives up on -------------------------------------------------------------------------

BASE = read(REPO_ROOT / "tests" / "corpus" / "good" / "crlf.yaml").replace("\r\n", "\n")


@pytest.mark.parametrize(
    "text",
    [
        BASE.replace("nodes: 2", "nodes: 0o2"),
        BASE.replace("nodes: 2", "nodes: 02"),
        BASE.replace("nodes: 2", "nodes: +2"),
        BASE.replace("nodes: 2", "nodes: 2\n        nodes: 3"),
        BASE.replace("gpu: tesla-t4", "gpu: !!str tesla-t4"),
        BASE.replace("gpu: tesla-t4", "gpu: !custom tesla-t4"),
        BASE.replace("{pool: t4}", "{1: t4}"),
        BASE.replace("{pool: t4}", "{? [a]: t4}"),
        BASE.replace("nodes: 2", "nodes: &n true"),
        BASE.replace("nodes: 2", "nodes:"),
        BASE.replace("nodes: 2", "nodes: 2024-01-01"),
        BASE.replace("nodes: 2", "nodes:\t2"),
        BASE.replace("prod", "pr\x07d"),
        BASE.replace("prod", "pr\u2028d"),
        "%YAML 1.2\n---\n" + BASE,
        BASE + "---\n" + BASE,
        BASE + "---\n",
        "",
        "- a\n",
        BASE.replace("apiVersion", "a: &x [*x]\napiVersion"),
        BASE.replace("apiVersion", "a: &a {}\nb: &a {}\napiVersion"),
        BASE.replace("nodes: 2", "<<: 1"),
        BASE.replace("nodes: 2", "nodes: 2\n        <<: {a: 1}\n        <<: {b: 1}"),
        BASE.replace("{pool: t4}", "{pool: t4"),
    ],
)
def test_gives_up_where_the_round_trip_path_has_something_to_say(text: str) -> None:
    with pytest.raises(GiveUp):
        _fast_parse(text, "fleet.yaml")


def test_alias_bomb_gives_up_within_the_budget() -> None:
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    lines += [f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]" for i in range(8)]
    with pytest.raises(GiveUp) as caught:
        _fast_parse("\n".join(lines) + "\n", "fleet.yaml")
    assert (caught.value.line, caught.value.column, caught.value.path) == (7, 1, ("g",))


# -- files over MAX_DETAILED_BYTES ------------------------------------------------------------------------


def big(text: str) -> str:
    """``text`` padded past MAX_DETAILED_BYTES with comment lines, so that the round-trip path is not used."""
    return text + ("# padding\n" * (MAX_DETAILED_BYTES // 10 + 1))


def problem_of(text: str) -> str:
    with pytest.raises(FleetError) as caught:
        parse_text(text, "big.yaml")
    (problem,) = caught.value.problems
    return problem.format()


def test_a_large_valid_fleet_is_read_by_the_fast_path() -> None:
    yaml = YAML(typ="safe")
    yaml.default_flow_style = False
    out = io.StringIO()
    fleet = generate_fleet(230)
    yaml.dump(fleet, out)
    text = out.getvalue()
    assert MAX_DETAILED_BYTES < len(text.encode()) < MAX_FLEET_BYTES
    doc = parse_text(text, "big.yaml")
    assert doc.data == fleet
    assert doc.locate(("clusters", 229, "nodePools", 7, "gpu"), key=True)[0] > 40_000


def test_a_large_file_is_refused_at_the_fast_paths_problem() -> None:
    assert problem_of(big(BASE.replace("nodes: 2", "nodes: 2\n        nodes: 3"))) == (
        "big.yaml:14:9: clusters[0].nodePools[0].nodes: duplicate key 'nodes': first at line 13, again at line 14 "
        "(hint: a key may appear once per mapping; remove one of them)"
    )
    assert problem_of(big(BASE.replace("{pool: t4}", "{pool: t4"))).startswith("big.yaml:15:")
    assert problem_of(big(BASE.replace("gpu: tesla-t4", "gpu: !custom tesla-t4"))) == (
        "big.yaml:12:14: clusters[0].nodePools[0].gpu: the YAML tag !custom is not allowed "
        "(hint: remove the tag and write the plain value)"
    )
    assert problem_of(big(BASE.replace("nodes: 2", "nodes:\t2"))) == (
        "big.yaml:13:15: a tab character is not supported in a file over 1,048,576 bytes "
        "(hint: replace it with spaces, or split the fleet into files of at most 1,048,576 bytes)"
    )
    assert problem_of(big(BASE.replace("nodes: 2", "nodes: 0o2"))).startswith(
        "big.yaml:13:16: clusters[0].nodePools[0].nodes: the integer 0o2 is not written in plain decimal"
    )


def test_a_large_flat_file_is_refused_by_the_value_budget() -> None:
    text = "clusters:\n" + "- x\n" * (MAX_FLEET_BYTES // 4 - 10)
    assert problem_of(text) == (
        "big.yaml:1:1: clusters: the document expands to more than 1,000,000 values (aliases included) "
        "(hint: an alias bomb, or a fleet too large for one file: split it)"
    )
