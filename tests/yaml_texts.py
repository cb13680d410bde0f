"""Fleet texts for the reader's tests: generated fleets dumped by ruamel in every style a person might write."""

from __future__ import annotations

import io
from typing import Any

from hypothesis import strategies as st
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.mergevalue import MergeValue
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString

from benchmarks.fleetgen import generate_fleet


def strict(value: Any) -> Any:
    """A comparable form that tells True from 1 and 1 from 1.0, and keeps the order of mapping keys."""
    if isinstance(value, dict):
        return ("map", [(key, strict(item)) for key, item in value.items()])
    if isinstance(value, list):
        return ("seq", [strict(item) for item in value])
    return (type(value).__name__, value)


ONE_OR_TWO = st.integers(1, 2)
QUOTES = st.sampled_from(["plain", "single", "double"])


def commented(value: Any, draw: Any, seen: dict[str, Any], flow: str) -> Any:
    """``value`` as ruamel round-trip objects: quoting, flow or block style, aliases of equal collections."""
    if isinstance(value, str):
        quote = draw(QUOTES)
        return (
            value
            if quote == "plain"
            else SingleQuotedScalarString(value)
            if quote == "single"
            else DoubleQuotedScalarString(value)
        )
    if not isinstance(value, (dict, list)):
        return value
    canonical = repr(value)
    if canonical in seen and draw(st.integers(0, 3)) == 0:
        return seen[canonical]  # the same object again: ruamel writes an anchor and an alias
    if isinstance(value, dict):
        node: Any = CommentedMap((key, commented(item, draw, seen, flow)) for key, item in value.items())
    else:
        node = CommentedSeq(commented(item, draw, seen, flow) for item in value)
    if flow == "flow" or (flow == "mixed" and draw(st.booleans())):
        node.fa.set_flow_style()
    else:
        node.fa.set_block_style()
    seen.setdefault(canonical, node)
    return node


def merge_pools(pools: CommentedSeq, draw: Any) -> None:
    """Rewrite some pools as ``<<: *earlier`` plus the keys that differ, keeping each pool's data."""
    for index in range(1, len(pools)):
        pool = pools[index]
        if not isinstance(pool, CommentedMap) or not draw(st.booleans()):
            continue
        bases = [
            base
            for base in pools[:index]
            if isinstance(base, CommentedMap) and base is not pool and set(base) <= set(pool)
        ]
        if not bases:
            continue
        base = draw(st.sampled_from(bases))
        base.yaml_set_anchor(f"pool{id(base)}", always_dump=True)
        merged = CommentedMap(
            (key, item) for key, item in pool.items() if key not in base or base[key] != item or draw(st.booleans())
        )
        if pool.fa.flow_style():
            merged.fa.set_flow_style()
        value = MergeValue()
        value.append(base)
        value.merge_pos = draw(st.integers(0, len(merged)))
        merged.add_yaml_merge(value)
        pools[index] = merged


@st.composite
def fleet_texts(draw: Any, clusters: st.SearchStrategy[int] = ONE_OR_TWO) -> tuple[dict[str, Any], str]:
    """A generated fleet and a text of it: block, flow or mixed style, quoting, anchors, aliases and merges."""
    fleet = generate_fleet(draw(clusters), seed=draw(st.integers(0, 2**32 - 1)))
    flow = draw(st.sampled_from(["block", "flow", "mixed"]))
    document = commented(fleet, draw, {}, flow)
    for cluster in document["clusters"]:
        merge_pools(cluster["nodePools"], draw)
    yaml = YAML()
    yaml.width = draw(st.sampled_from([80, 4096]))
    out = io.StringIO()
    yaml.dump(document, out)
    return fleet, out.getvalue()


def edit_characters(text: str, rng: Any, pieces: list[str]) -> str:
    """``text`` with one to three of ``pieces`` inserted, or runs of up to four characters deleted, at random."""
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(text) + 1)
        if rng.random() < 0.7:
            text = text[:at] + rng.choice(pieces) + text[at:]
        else:
            text = text[:at] + text[at + rng.randint(1, 4) :]
    return text


def edit_lines(text: str, rng: Any) -> str:
    """Line edits a user makes, one to three: a line removed, copied elsewhere, re-indented by two spaces,
    a comment inserted, or a digit changed."""
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(lines))
        choice = rng.random()
        if choice < 0.2:
            del lines[at]
        elif choice < 0.35:
            lines.insert(at, lines[rng.randrange(len(lines))])
        elif choice < 0.45:
            dedent = lines[at].startswith("  ") and rng.random() < 0.5
            lines[at] = lines[at][2:] if dedent else "  " + lines[at]
        elif choice < 0.6:
            lines.insert(at, " " * rng.randint(0, 6) + "# a note")
        else:
            digits = [i for i, c in enumerate(lines[at]) if c.isdigit()]
            if digits:
                i = rng.choice(digits)
                lines[at] = lines[at][:i] + str(rng.randrange(10)) + lines[at][i + 1 :]
    return "\n".join(lines)
