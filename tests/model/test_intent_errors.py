"""intent.py + validation_errors.py: strict types, no coercion, and plain messages with hints."""

from __future__ import annotations

import pytest
from fleet_text import BASE, edit, load, problems

from gpustack_gen.errors import Problem

NODES = "clusters[0].nodePools[0].nodes"
SHARING = "clusters[0].nodePools[0].sharing"


def only(text: str) -> Problem:
    (problem,) = problems(text)
    return problem


def test_unknown_key_with_did_you_mean() -> None:
    assert only(edit({8: "contianerRuntime: containerd"})).format() == (
        "fleet.yaml:8:5: clusters[0].contianerRuntime: unknown key 'contianerRuntime' (hint: did you mean 'containerRuntime'?)"
    )


def test_unknown_key_differing_in_case() -> None:
    problem = only(edit({14: "gpusPerNOde: 1"}))
    assert problem.hint == "did you mean 'gpusPerNode'?"


def test_unknown_key_without_a_close_match_lists_the_allowed_ones() -> None:
    problem = only(BASE.replace("kind: Fleet", "kind: Fleet\nzzz: 1"))
    assert (
        problem.format()
        == "fleet.yaml:3:1: zzz: unknown key 'zzz' (hint: allowed keys here: apiVersion, kind, defaults, clusters)"
    )


def test_missing_required_key() -> None:
    assert only(edit({13: "# no nodes"})).format() == (
        f"fleet.yaml:11:9: {NODES}: required key 'nodes' is missing (hint: add nodes: <number of nodes>)"
    )


@pytest.mark.parametrize(
    ("line", "message", "hint"),
    [
        ("nodes: '2'", "expected an integer, got the string '2'", "remove the quotes: 2"),
        ("nodes: 2.0", "expected an integer, got the number 2.0", "without a fraction or an exponent"),
        ("nodes: 1e3", "expected an integer, got the number 1000.0", "without a fraction or an exponent"),
        ("nodes: 1:30", "expected an integer, got the string '1:30'", "base-60"),
        ("nodes: true", "expected an integer, got the boolean true", "a whole number"),
        ("nodes: 2024-01-01", "expected an integer, got the date 2024-01-01", "a whole number"),
    ],
)
def test_no_coercion_to_integers(line: str, message: str, hint: str) -> None:
    problem = only(edit({13: line}))
    assert (problem.line, problem.column, problem.path) == (13, 16, NODES)
    assert problem.message == message
    assert hint in problem.hint


@pytest.mark.parametrize("word", ["yes", "no", "on", "off", "NO", "Y"])
def test_yaml_1_1_booleans_are_strings(word: str) -> None:
    problem = only(edit({16: f"sharing: {{strategy: time-slicing, replicas: 2, renameByDefault: {word}}}"}))
    assert problem.path == f"{SHARING}.renameByDefault"
    assert problem.message == f"expected true or false, got the string {word!r}"
    assert problem.hint == f"YAML 1.2 reads {word!r} as a string; write true or false"


@pytest.mark.parametrize(
    ("value", "message", "hint"),
    [
        ("1.29", "expected a string, got the number 1.29", 'quote it, as major.minor.patch: "1.29.0"'),
        ("2024-01-01", "expected a string, got the date 2024-01-01", "YAML reads this as a date"),
        ("true", "expected a string, got the boolean true", 'quote it if a string was meant: "true"'),
    ],
)
def test_no_coercion_to_strings(value: str, message: str, hint: str) -> None:
    problem = only(edit({7: f"kubernetes: {value}"}))
    assert (problem.line, problem.column, problem.path) == (7, 17, "clusters[0].kubernetes")
    assert problem.message == message
    assert hint in problem.hint


def test_literal_with_did_you_mean() -> None:
    problem = only(edit({16: "sharing: {strategy: timeslicing}"}))
    assert problem.format() == (
        f"fleet.yaml:16:29: {SHARING}.strategy: expected one of 'none', 'time-slicing', 'mps', 'mig' or 'hami', "
        "got the string 'timeslicing' (hint: did you mean 'time-slicing'?)"
    )


def test_scalar_where_a_mapping_is_expected() -> None:
    assert only(edit({9: "mig: single"})).format() == (
        "fleet.yaml:9:10: clusters[0].mig: expected a mapping, got the string 'single' (hint: write {strategy: single})"
    )


def test_mapping_where_a_list_is_expected() -> None:
    problem = only(edit({18: "  {name: app, namespace: ml, pool: pool}"}).replace("workloads:\n", "workloads:"))
    assert problem.path == "clusters[0].workloads"
    assert problem.message == "expected a list, got a mapping"
    assert problem.hint == "start each item with '- '"


@pytest.mark.parametrize(
    ("replicas", "message"),
    [("0", "must be at least 2, got 0"), ("-3", "must be at least 2, got -3"), ("1", "must be at least 2, got 1")],
)
def test_sharing_replicas_below_two(replicas: str, message: str) -> None:
    problem = only(edit({16: f"sharing: {{strategy: time-slicing, replicas: {replicas}}}"}))
    assert (problem.line, problem.column, problem.path, problem.message) == (16, 53, f"{SHARING}.replicas", message)
    assert "for whole GPUs use strategy: none" in problem.hint


def test_empty_list() -> None:
    problem = only(edit({10: "nodePools: []", **dict.fromkeys(range(11, 17), "#")}))
    assert (
        problem.format() == "fleet.yaml:10:16: clusters[0].nodePools: must not be empty (hint: add at least one item)"
    )


@pytest.mark.parametrize(
    ("name", "flaw", "suggestion"),
    [
        ("prod/x", "it contains a path separator or '..'", "prod-x"),
        ("..", "it contains a path separator or '..'", ""),
        ("Prod", "it contains uppercase letters", "prod"),
        ('"my prod"', "it contains whitespace", "my-prod"),
        ("\u0440rod", "it contains the non-ASCII character '\u0440' (U+0440 CYRILLIC SMALL LETTER ER)", ""),
        ("pr\u043ed", "which looks like 'o'", "prod"),
        ("a" * 64, "it is 64 characters long (at most 63)", "a" * 63),
        ("-prod", "it starts or ends with '-'", "prod"),
        ("prod_1", "it contains '_'", "prod-1"),
    ],
)
def test_names_are_dns_labels(name: str, flaw: str, suggestion: str) -> None:
    problem = only(edit({6: f"- name: {name}"}))
    assert (problem.line, problem.column, problem.path) == (6, 11, "clusters[0].name")
    assert flaw in problem.message
    assert problem.hint.startswith("use lowercase letters, digits and '-'")
    if suggestion:
        assert problem.hint.endswith(f"e.g. {suggestion!r}")


def test_label_key_in_a_node_selector() -> None:
    problem = only(edit({15: 'nodeSelector: {"bad key!": x}'}))
    assert (problem.line, problem.column, problem.path) == (15, 24, 'clusters[0].nodePools[0].nodeSelector["bad key!"]')
    assert problem.message.startswith("label key name 'bad key!' must be")


@pytest.mark.parametrize(
    ("cpu", "message", "hint"),
    [
        ("1.5", "expected a Kubernetes quantity, got 1.5", 'quote it: "1.5"'),
        ("4GB", "'4GB' is not a Kubernetes quantity", "4G or 4Gi"),
        ("-1", "a resource request cannot be negative, got -1", "millicores"),
        ("true", "expected a Kubernetes quantity, got true", "quoted string"),
    ],
)
def test_quantities_are_validated(cpu: str, message: str, hint: str) -> None:
    problem = only(edit({18: f"- {{name: app, namespace: ml, pool: pool, cpu: {cpu}}}"}))
    assert (problem.line, problem.column, problem.path) == (18, 53, "clusters[0].workloads[0].cpu")
    assert problem.message == message
    assert hint in problem.hint


def test_every_problem_is_reported_at_once() -> None:
    text = edit({7: "kubernetes: 1.29", 13: "nodes: '2'", 16: "sharing: {strategy: nope}"})
    assert [p.path for p in problems(text)] == ["clusters[0].kubernetes", NODES, f"{SHARING}.strategy"]


TAINT = "clusters[0].nodePools[0].taints[0]"


@pytest.mark.parametrize(
    ("taint", "column", "field", "message", "hint"),
    [
        (
            "{key: 'bad key'}",
            24,
            "key",
            "taint key: label key name 'bad key' must be at most 63 characters",
            "e.g. nvidia.com/gpu or dedicated",
        ),
        (
            "{key: Example.com/gpu}",
            24,
            "key",
            "taint key: label key prefix 'Example.com' must be a lowercase DNS subdomain",
            "e.g. nvidia.com/gpu",
        ),
        ("{key: ''}", 24, "key", "taint key: label key name '' must be", "e.g. nvidia.com/gpu"),
        (
            "{key: dedicated, value: 'gpu only'}",
            42,
            "value",
            "taint value: label value 'gpu only' must be at most 63 characters",
            "without a value the toleration uses operator Exists",
        ),
        ("{key: dedicated, value: -gpu}", 42, "value", "taint value: label value '-gpu' must be", "e.g. gpu"),
    ],
    ids=["key-space", "key-prefix-uppercase", "key-empty", "value-space", "value-leading-dash"],
)
def test_taints_are_label_keys_and_values(taint: str, column: int, field: str, message: str, hint: str) -> None:
    # B5: a taint key is a label key and its value a label value, located at the field.
    problem = only(edit({16: f"sharing: {{strategy: none}}\ntaints: [{taint}]"}))
    assert (f"{problem.file}:{problem.line}:{problem.column}", problem.path) == (
        f"fleet.yaml:17:{column}",
        f"{TAINT}.{field}",
    )
    assert message in problem.message
    assert hint in problem.hint


def test_a_valid_taint_loads() -> None:
    text = edit({16: "sharing: {strategy: none}\ntaints: [{key: nvidia.com/gpu, value: present, effect: NoExecute}]"})
    (taint,) = load(text).clusters[0].pools[0].taints
    assert (taint.key, taint.value, taint.effect) == ("nvidia.com/gpu", "present", "NoExecute")


@pytest.mark.parametrize(
    ("version", "example"),
    [
        ("v580.82.07", "580.82.07"),
        ("580.82.07-ubuntu22.04", "580.82.07"),
        ("latest", "580.82.07"),
        ("580", "580.82.07"),
        ("580.82.07.1", "580.82.07"),
    ],
)
def test_driver_version_must_look_like_a_driver_version(version: str, example: str) -> None:
    # B8: the version the driver images are tagged with, 580.82.07 or 550.54.
    problem = only(edit({4: f"operator: {{version: v25.3.3, driver: {{version: '{version}'}}}}"}))
    assert (f"{problem.file}:{problem.line}:{problem.column}", problem.path) == (
        "fleet.yaml:4:50",
        "defaults.operator.driver.version",
    )
    assert problem.message == f"{version!r} is not a driver version"
    assert "without a v prefix or an OS suffix" in problem.hint
    assert problem.hint.endswith(f'"{example}"')


@pytest.mark.parametrize("version", ["580.82.07", "550.54"])
def test_driver_versions_that_load(version: str) -> None:
    fleet = load(edit({4: f"operator: {{version: v25.3.3, driver: {{version: '{version}'}}}}"}))
    assert fleet.clusters[0].operator.driver_version == version
