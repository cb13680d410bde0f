"""Two loads sharing a ClusterShare (diff, plan): clean clusters resolved once, every problem still reported."""

from __future__ import annotations

import copy
import io
import random
from typing import Any

import pytest
from fleets import base
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from yaml_texts import edit_lines

from benchmarks.fleetgen import generate_fleet
from gpustack_gen import load_fleet
from gpustack_gen.errors import FleetError
from gpustack_gen.model import Fleet
from gpustack_gen.model.share import ClusterShare


def _clean(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "kubernetes": "1.29.15",
        "containerRuntime": "containerd",
        "nodePools": [{"name": "t4", "gpu": "tesla-t4", "nodes": 1, "nodeSelector": {"pool": "t4"}}],
    }


def _fleet_data() -> dict[str, Any]:
    data = base()  # clusters[0] ("prod") has a warning: time-slicing gives no memory isolation
    data["clusters"] += [_clean("east"), _clean("west"), _clean("north")]
    return data


def _text(data: dict[str, Any], comment_lines: int = 0) -> str:
    out = io.StringIO()
    YAML().dump(data, out)
    # Lines before the clusters shift every position of the second file against the first.
    return "#\n" * comment_lines + out.getvalue()


def _both(old: str, new: str) -> tuple[Fleet, Fleet]:
    share = ClusterShare()
    return load_fleet(old, name="old.yaml", share=share), load_fleet(new, name="new.yaml", share=share)


def test_clean_clusters_the_new_fleet_repeats_are_the_old_ones_and_the_result_is_a_load_of_its_own() -> None:
    changed = _fleet_data()
    changed["clusters"][2]["nodePools"][0]["nodes"] = 2
    old_text, new_text = _text(_fleet_data()), _text(changed, comment_lines=3)

    old, new = _both(old_text, new_text)

    assert new == load_fleet(new_text, name="new.yaml")  # warnings included, located in new.yaml
    assert new.clusters[1] is old.clusters[1] and new.clusters[3] is old.clusters[3]
    assert new.clusters[0] is old.clusters[0]  # its warning is located again, in new.yaml
    assert new.clusters[2] is not old.clusters[2]
    assert [(w.file, w.line) for w in new.warnings] == [("new.yaml", w.line + 3) for w in old.warnings]


@pytest.mark.parametrize(
    ("field", "value", "path"),
    [("gpu", "tesla-t5", "clusters[2].nodePools[0].gpu"), ("nodes", "two", "clusters[2].nodePools[0].nodes")],
    ids=["resolve-error", "validation-error"],
)
def test_an_error_in_a_changed_cluster_is_reported_as_a_load_of_its_own_reports_it(
    field: str, value: str, path: str
) -> None:
    broken = _fleet_data()
    broken["clusters"][2]["nodePools"][0][field] = value
    new_text = _text(broken, comment_lines=2)
    with pytest.raises(FleetError) as alone:
        load_fleet(new_text, name="new.yaml")

    with pytest.raises(FleetError) as shared:
        _both(_text(_fleet_data()), new_text)

    assert shared.value.problems == alone.value.problems
    assert path in str(shared.value) and "new.yaml:" in str(shared.value)


def test_an_error_in_an_unchanged_cluster_is_reported_by_each_load_in_its_own_file() -> None:
    broken = _fleet_data()
    broken["clusters"][1]["nodePools"][0]["gpu"] = "tesla-t5"
    with pytest.raises(FleetError) as alone:
        load_fleet(_text(broken, comment_lines=1), name="new.yaml")
    share = ClusterShare()

    with pytest.raises(FleetError) as first:
        load_fleet(_text(broken), name="old.yaml", share=share)
    with pytest.raises(FleetError) as second:  # the same cluster, unchanged, in the new fleet
        load_fleet(_text(broken, comment_lines=1), name="new.yaml", share=share)

    assert [(p.line, p.path) for p in first.value.problems] == [(p.line - 1, p.path) for p in alone.value.problems]
    assert first.value.problems[0].file == "old.yaml"
    assert second.value.problems == alone.value.problems


def test_data_equal_under_python_equality_but_of_another_type_is_validated_again() -> None:
    # True == 1 in Python; the fleet's integers are strict, so nodes: true is an error.
    changed = _fleet_data()
    changed["clusters"][1]["nodePools"][0]["nodes"] = True
    assert changed == _fleet_data()

    with pytest.raises(FleetError) as shared:
        _both(_text(_fleet_data()), _text(changed))

    assert "clusters[1].nodePools[0].nodes" in str(shared.value)


def test_changed_defaults_resolve_every_cluster_again() -> None:
    changed = _fleet_data()
    changed["defaults"]["operator"]["version"] = "v25.3.4"

    old, new = _both(_text(_fleet_data()), _text(changed))

    assert new == load_fleet(_text(changed), name="new.yaml")
    assert all(n is not o for n, o in zip(new.clusters, old.clusters, strict=True))


def test_a_share_is_emptied_by_the_load_that_takes_from_it() -> None:
    share = ClusterShare()
    load_fleet(_text(_fleet_data()), share=share)
    assert len(share.clean) == 4

    load_fleet(_text(copy.deepcopy(_fleet_data())), share=share)

    assert share.clean == {}


def test_a_warning_of_a_shared_cluster_is_located_where_the_second_file_writes_it() -> None:
    # The same data written another way: the pool's sharing in flow style, on one line, further down.
    old_text = _text(_fleet_data())
    new_text = old_text.replace("clusters:\n", "# moved\nclusters:\n").replace(
        "    sharing:\n      strategy: time-slicing\n      replicas: 4\n",
        "    sharing: {strategy: time-slicing, replicas: 4}\n",
    )
    assert "{strategy: time-slicing" in new_text

    old, new = _both(old_text, new_text)

    assert new.clusters[0] is old.clusters[0]
    assert new.warnings == load_fleet(new_text, name="new.yaml").warnings
    assert [(w.line, w.column) for w in new.warnings] != [(w.line, w.column) for w in old.warnings]


def test_the_second_file_is_re_read_from_the_first_and_its_unchanged_clusters_validated_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gpustack_gen.model import intent
    from gpustack_gen.yamlio import reread as reread_module

    changed = _fleet_data()
    changed["clusters"][2]["nodePools"][0]["nodes"] = 2
    old_text, new_text = _text(_fleet_data()), _text(changed)  # a line added above the list would be read in full
    found: list[Any] = []
    real_reread = reread_module.reread
    monkeypatch.setattr(reread_module, "reread", lambda *args: found.append(real_reread(*args)) or found[-1])
    validated: list[Any] = []
    real_validate = intent.FleetSpec.model_validate
    monkeypatch.setattr(intent.FleetSpec, "model_validate", lambda data: validated.append(data) or real_validate(data))

    old, new = _both(old_text, new_text)

    assert found[0] is not None and found[0].kept_items == {0, 1, 3}
    second = validated[1]["clusters"]
    assert [isinstance(item, intent.Cluster) for item in second] == [True, True, False, True]
    assert new == load_fleet(new_text, name="new.yaml")
    assert new.clusters[1] is old.clusters[1] and new.clusters[2] is not old.clusters[2]


def test_the_first_files_models_are_dropped_when_the_second_cannot_be_re_read() -> None:
    share = ClusterShare()
    load_fleet(_text(_fleet_data()), share=share)
    assert share.reading is not None and all(entry.model is not None for entry in share.clean.values())

    share.reading.release()  # what the reader does before it reads the second file in full

    assert share.clean and all(entry.model is None for entry in share.clean.values())


def test_a_first_fleet_given_as_data_keeps_no_reading_and_no_models() -> None:
    share = ClusterShare()
    load_fleet(_fleet_data(), share=share)
    assert share.reading is None and all(entry.model is None for entry in share.clean.values())


def _outcome(load: Any) -> Any:
    try:
        return load()
    except FleetError as exc:
        return [str(problem) for problem in exc.problems]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.integers(3, 6), st.randoms(use_true_random=False))
def test_an_edited_fleet_loads_with_a_share_as_it_loads_on_its_own(seed: int, count: int, rng: random.Random) -> None:
    old_text = _text(generate_fleet(count, seed=seed))
    new_text = edit_lines(old_text, rng)
    share = ClusterShare()
    load_fleet(old_text, name="old.yaml", share=share)

    shared = _outcome(lambda: load_fleet(new_text, name="new.yaml", share=share))

    # The fleet with its warnings (file, line, column, path, text), or every problem, as a full load says them.
    assert shared == _outcome(lambda: load_fleet(new_text, name="new.yaml"))
