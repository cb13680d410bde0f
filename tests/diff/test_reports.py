"""Reports: golden Markdown and JSON for a change to examples/fleet.yaml, escaping, annotations, colour."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fleets import base, changed, diff
from golden import assert_golden

from gpustack_gen import load_fleet
from gpustack_gen.diff import DiffResult, Side, diff_sides
from gpustack_gen.diff.report import ReportContext, render_github, render_json, render_markdown, render_text
from gpustack_gen.templates import template_dirs

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"
EXAMPLE = HERE.parent.parent / "examples" / "fleet.yaml"

# A pull request against the example: more replicas on prod's T4s, a renamed shared resource on stage,
# one 1g.5gb instance less per A100 of train (the old layout kept retired while nodes carry it), and a
# third H100 node.
EDITS = [
    ("tesla-t4: {strategy: time-slicing, replicas: 4}", "tesla-t4: {strategy: time-slicing, replicas: 5}"),
    ("tesla-t4: {replicas: 5}", "tesla-t4: {replicas: 5, renameByDefault: true}"),
    ('"2g.10gb": 1, "1g.5gb": 2}', '"2g.10gb": 1, "1g.5gb": 1}'),
    ("        gpu: h100-80gb\n        nodes: 2", "        gpu: h100-80gb\n        nodes: 3"),
    (
        "  - name: train\n",
        '  - name: train\n    retired: {migConfigs: [{gpu: a100-40gb, layout: {"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 2}}]}\n',
    ),
]
PLAN = ReportContext(plan_command="gpustack-gen plan --base origin/main examples/fleet.yaml")


def example_change() -> DiffResult:
    text = EXAMPLE.read_text(encoding="utf-8")
    edited = text
    for old, new in EDITS:
        assert old in edited, f"examples/fleet.yaml changed: {old!r} not found; update EDITS"
        edited = edited.replace(old, new, 1)
    old_fleet = load_fleet(text, name="examples/fleet.yaml")
    new_fleet = load_fleet(edited, name="examples/fleet.yaml")
    return diff_sides(
        Side.of_fleet(old_fleet, "origin/main:examples/fleet.yaml"),
        Side.of_fleet(new_fleet, "examples/fleet.yaml", "examples/fleet.yaml"),
    )


def test_golden_markdown() -> None:
    assert_golden(render_markdown(example_change(), PLAN), GOLDEN / "example.md")


def test_golden_json() -> None:
    assert_golden(render_json(example_change()), GOLDEN / "example.json")


def test_golden_text() -> None:
    assert_golden(render_text(example_change(), PLAN), GOLDEN / "example.txt")


def test_json_is_stable_and_documented_keys_are_present() -> None:
    data = json.loads(render_json(example_change()))

    assert list(data) == [
        "format",
        "old",
        "new",
        "changed",
        "impactAvailable",
        "impactNote",
        "level",
        "summary",
        "clusters",
    ]
    assert data["format"] == "gpustack-gen-diff/v2"
    assert [c["name"] for c in data["clusters"]] == ["prod", "stage", "train"]
    assert data["level"] == "disruptive"
    cluster = data["clusters"][0]
    assert list(cluster) == ["name", "status", "level", "files", "capacity", "findings"]
    assert list(cluster["files"][0]) == ["path", "kind", "status", "documents", "notes"]
    assert list(cluster["findings"][0]) == ["rule", "level", "pool", "message", "items", "hint", "actions"]
    assert render_json(example_change()) == render_json(example_change())


def test_golden_example_shows_the_issue_examples() -> None:
    result = example_change()

    assert "prod: capacity t4: nvidia.com/gpu 12 -> 15 (workloads ask 7)" in result.summary()
    text = render_text(result)
    assert "data.t4.sharing.timeSlicing.resources[0].replicas: 4 -> 5" in text
    assert "pool t4 stops advertising nvidia.com/gpu (now nvidia.com/gpu.shared)" in text
    assert "nvidia.com/device-plugin.config" not in text.split("files:")[0]  # no relabel anywhere


def test_markdown_puts_the_summary_table_first_and_folds_details() -> None:
    markdown = render_markdown(example_change())

    table = markdown.index("| Cluster | Status | Impact | Files | Capacity |")
    assert table < markdown.index("<details>")
    assert markdown.count("<details>") == markdown.count("</details>") == 3


def test_markdown_escapes_user_strings() -> None:
    """A fleet file name is the one free-form string of a report: it is escaped like any other."""
    hostile = "<script>x</script>|*b*_@team`"
    old_fleet = load_fleet(base(), name="fleet.yaml")
    new_fleet = load_fleet(changed(_replicas), name="fleet.yaml")
    result = diff_sides(Side.of_fleet(old_fleet, hostile), Side.of_fleet(new_fleet, "fleet.yaml"))

    markdown = render_markdown(result)

    assert "<script>" not in markdown
    assert "@team" not in markdown
    assert "|*b*" not in markdown
    assert "&lt;script&gt;x&lt;/script&gt;&#124;&#42;b&#42;&#95;&#64;team&#96;" in markdown


def test_markdown_of_no_changes() -> None:
    markdown = render_markdown(diff(base(), base()))

    assert "no changes" in markdown
    assert "<details>" not in markdown


def test_markdown_without_intents_says_impact_needs_fleets() -> None:
    result = DiffResult("a/", "b/", diff(base(), changed(_replicas)).clusters, impact_available=False)

    markdown = render_markdown(result)

    assert "capacity and impact need fleet files" in markdown
    assert "| Cluster | Status | Files |" in markdown


def _replicas(data: dict[str, Any]) -> None:
    data["clusters"][0]["nodePools"][0]["sharing"]["replicas"] = 5


def test_github_annotations() -> None:
    result = diff(
        base(),
        changed(
            lambda d: d["clusters"][0]["nodePools"][1]["sharing"].update(
                layout={"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 1}
            )
        ),
    )

    lines = render_github(result, ReportContext(annotation_file="fleet.yaml")).splitlines()

    # The old layout is not retired: the change cannot be rolled out as written.
    assert lines[0].startswith("::error file=fleet.yaml,title=prod%3A retention::the nodes of pool a100 carry")
    assert "%0Afix: keep it while the rollout runs: add to cluster prod: retired: {migConfigs:" in lines[0]
    assert lines[1].startswith("::warning file=fleet.yaml,title=prod%3A mig-layout::pool a100: MIG layout changes")
    assert "%0Aplan: apply-configmaps, node-group, wait, check, label-nodes, drain, uncordon" in lines[1]
    assert lines[-1].startswith("gpustack-gen diff: clusters: 1 changed")


def test_github_error_annotation_and_escaping() -> None:
    import dataclasses

    from gpustack_gen.diff import Finding, Level

    result = diff(base(), changed(_replicas))
    cluster = dataclasses.replace(
        result.clusters[0], findings=(Finding("capacity", Level.ERROR, "50% short\nreally, truly"),)
    )

    output = render_github(
        dataclasses.replace(result, clusters=(cluster,)), ReportContext(annotation_file="dir,with:odd/fleet.yaml")
    )

    assert output.splitlines()[0] == (
        "::error file=dir%2Cwith%3Aodd/fleet.yaml,title=prod%3A capacity::50%25 short%0Areally, truly"
    )


def test_github_no_changes() -> None:
    assert render_github(diff(base(), base()), ReportContext(annotation_file="fleet.yaml")) == (
        "::notice file=fleet.yaml,title=gpustack-gen diff::no changes\n"
    )


def test_text_is_coloured_only_when_asked() -> None:
    result = diff(base(), changed(_replicas))

    assert "\x1b[" in render_text(result, ReportContext(color=True))
    assert "\x1b[" not in render_text(result)
    assert render_text(diff(base(), base())) == "no changes\n"


def test_templates_come_from_the_package_data_then_the_repo() -> None:
    dirs = template_dirs()

    assert dirs, "no templates folder found"
    assert any((d / "diff.md.j2").is_file() for d in dirs)
    if len(dirs) == 2:
        assert dirs[0].parts[-2:] == ("_data", "templates")


def test_the_library_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    result = example_change()
    for render in (render_text, render_json, render_markdown):
        render(result)
    render_github(result)

    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "")
