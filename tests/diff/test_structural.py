"""The structural diff: documents and changed paths, ConfigMap data parsed, symmetry, inputs of each kind."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from fleets import base, changed, diff, fleet, pool, prod

import gpustack_gen.rendering
from gpustack_gen import render
from gpustack_gen.diff import DiffInputError, DiffResult, Side, diff_fleets, diff_sides, read_rendered, read_side
from gpustack_gen.diff.structural import NamedKey, format_path

CHANGES = {
    "replicas": lambda d: pool(d, "t4")["sharing"].update(replicas=5),
    "mig-layout": lambda d: pool(d, "a100")["sharing"].update(layout={"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 1}),
    "cdi": lambda d: d["defaults"]["operator"]["cdi"].update(enabled=False, default=False),
    "driver": lambda d: d["defaults"]["operator"]["driver"].update(version="580.82.07"),
    "rename": lambda d: pool(d, "t4")["sharing"].update(renameByDefault=True),
    "selector": lambda d: pool(d, "t4").update(nodeSelector={"pool": "t4-v2"}),
    "pool-removed": lambda d: (prod(d)["nodePools"].pop(1), prod(d)["workloads"].pop(1)),
    "cluster-added": lambda d: d["clusters"].append({**copy.deepcopy(d["clusters"][0]), "name": "stage"}),
    "operator-version": lambda d: d["defaults"]["operator"].update(version="v25.3.4"),
}


def _file(result: DiffResult, cluster: str, path: str) -> Any:
    found = next(c for c in result.clusters if c.name == cluster)
    return next(f for f in found.files if f.path == path)


def test_configmap_data_is_parsed_under_stable_keys() -> None:
    result = diff(base(), changed(CHANGES["replicas"]))

    document = _file(result, "prod", "device-plugin-config.yaml").documents[0]
    assert document.identity == "ConfigMap gpu-operator/gpustack-device-plugin-config"
    assert [(c.path, c.kind, c.old, c.new) for c in document.changes] == [
        ("data.t4.sharing.timeSlicing.resources[0].replicas", "changed", 4, 5),
    ]


def test_a_renamed_configmap_key_is_followed(tmp_path: Path) -> None:
    """Keys of an older render (content-named, such as time-slicing-4) pair with the key that replaced them."""
    old = _write(base(), tmp_path / "old")
    path = old / "prod" / "device-plugin-config.yaml"
    path.write_text(path.read_text().replace("  t4: |", "  time-slicing-4: |"))

    result = diff_sides(read_side(str(old)), read_side(str(_write(changed(CHANGES["replicas"]), tmp_path / "new"))))

    document = _file(result, "prod", "device-plugin-config.yaml").documents[0]
    assert [(c.path, c.kind, c.old, c.new) for c in document.changes] == [
        ("data.time-slicing-4", "renamed", "time-slicing-4", "t4"),
        ("data.time-slicing-4.sharing.timeSlicing.resources[0].replicas", "changed", 4, 5),
    ]


def test_configmap_value_change_under_the_same_key() -> None:
    # Switching the cluster's MIG strategy keeps every key and changes flags.migStrategy inside each value.
    def single(data: dict[str, Any]) -> None:
        pool(data, "a100")["sharing"] = {"strategy": "mig", "config": "all-1g.5gb"}
        prod(data)["workloads"][1].pop("migProfile")
        prod(data)["mig"]["strategy"] = "single"

    result = diff(changed(single), changed(lambda d: (single(d), prod(d)["mig"].update(strategy="mixed"))))

    changes = _file(result, "prod", "device-plugin-config.yaml").documents[0].changes
    assert [(c.path, c.old, c.new) for c in changes] == [
        ("data.a100.flags.migStrategy", "single", "mixed"),
        ("data.any.flags.migStrategy", "single", "mixed"),
        ("data.t4.flags.migStrategy", "single", "mixed"),
    ]


def test_pools_are_matched_by_name() -> None:
    result = diff(base(), changed(CHANGES["pool-removed"]))

    capacity = _file(result, "prod", "capacity.yaml").documents[0].changes
    assert [(c.path, c.kind) for c in capacity] == [("pools[name=a100]", "removed")]
    assert capacity[0].old["name"] == "a100"  # the removed value is plain data, not deepdiff's objects


def test_identical_fleets_are_empty_even_under_other_names() -> None:
    result = diff_fleets(fleet(base(), "a/fleet.yaml"), fleet(base(), "b/fleet.yaml"))

    assert result.empty
    assert result.summary() == []
    assert result.as_dict()["changed"] is False


def _reverse_changes(result: DiffResult) -> set[tuple[Any, ...]]:
    """Every change of ``result`` as the reverse diff would state it."""
    swapped = {"added": "removed", "removed": "added", "changed": "changed", "renamed": "renamed"}
    out: set[tuple[Any, ...]] = set()
    for cluster in result.clusters:
        for file in cluster.files:
            out.add((cluster.name, file.path, swapped[file.status.value]))
            for note in file.notes:
                out.add((cluster.name, file.path, note.path, note.new, note.old))
            for document in file.documents:
                renames = {c.path: c for c in document.changes if c.kind == "renamed"}
                for change in document.changes:
                    path = change.path
                    for prefix, rename in renames.items():
                        if path.startswith(prefix):  # the reverse names the value by the other key
                            path = path.replace(str(rename.old), str(rename.new), 1)
                    kind = swapped[change.kind]
                    old, new = (change.new, change.old)
                    out.add(_frozen((cluster.name, file.path, document.identity, path, kind, old, new)))
    return out


def _changes(result: DiffResult) -> set[tuple[Any, ...]]:
    out: set[tuple[Any, ...]] = set()
    for cluster in result.clusters:
        for file in cluster.files:
            out.add((cluster.name, file.path, file.status.value))
            for note in file.notes:
                out.add((cluster.name, file.path, note.path, note.old, note.new))
            for document in file.documents:
                for change in document.changes:
                    out.add(
                        _frozen(
                            (
                                cluster.name,
                                file.path,
                                document.identity,
                                change.path,
                                change.kind,
                                change.old,
                                change.new,
                            )
                        )
                    )
    return out


def _frozen(item: tuple[Any, ...]) -> tuple[str, ...]:
    return tuple(repr(x) for x in item)


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_swapping_old_and_new_gives_the_reverse_changes(name: str) -> None:
    old, new = base(), changed(CHANGES[name])

    forward, backward = diff(old, new), diff(new, old)

    assert not forward.empty

    assert _reverse_changes(forward) == _changes(backward)
    assert [(c.pool, c.resource, c.new, c.old) for cl in forward.clusters for c in cl.capacity] == [
        (c.pool, c.resource, c.old, c.new) for cl in backward.clusters for c in cl.capacity
    ]
    assert [(c.name, c.status.value) for c in forward.clusters] == [
        (c.name, {"added": "removed", "removed": "added"}.get(c.status.value, c.status.value))
        for c in backward.clusters
    ]


def test_header_notes_are_compared_without_the_source_line() -> None:
    result = diff(base(), changed(CHANGES["operator-version"]))

    notes = _file(result, "prod", "gpu-operator-values.yaml").notes
    assert len(notes) == 1
    assert notes[0].path == "(header)"
    assert "--version v25.3.3" in notes[0].old
    assert "--version v25.3.4" in notes[0].new


def test_only_clusters_whose_intent_differs_are_rendered(monkeypatch: pytest.MonkeyPatch) -> None:
    many = base()
    many["clusters"] = [{**copy.deepcopy(BASE_CLUSTER), "name": f"c{i}"} for i in range(30)]
    edited = copy.deepcopy(many)
    edited["clusters"][7]["nodePools"][0]["sharing"]["replicas"] = 5
    rendered: list[tuple[str, ...]] = []
    real = gpustack_gen.rendering.render

    def counting(fleet_: Any, clusters: Any = None) -> Any:
        rendered.append(tuple(clusters or ()))
        return real(fleet_, clusters)

    monkeypatch.setattr(gpustack_gen.rendering, "render", counting)

    result = diff(many, edited)

    assert [c.name for c in result.clusters] == ["c7"]
    assert rendered == [("c7",), ("c7",)]


BASE_CLUSTER = base()["clusters"][0]


def _write(fleet_data: dict[str, Any], out: Path) -> Path:
    render(fleet(fleet_data)).write(out)
    return out


def test_rendered_folders_give_the_same_structural_diff_without_impact(tmp_path: Path) -> None:
    old, new = base(), changed(CHANGES["replicas"])
    from_fleets = diff(old, new)

    from_folders = diff_sides(read_side(str(_write(old, tmp_path / "a"))), read_side(str(_write(new, tmp_path / "b"))))

    assert _changes(from_folders) == _changes(from_fleets)
    assert not from_folders.impact_available
    assert from_folders.summary() == []
    assert from_folders.as_dict()["clusters"][0]["findings"] is None
    assert "need fleet files" in from_folders.as_dict()["impactNote"]


def test_a_fleet_against_its_own_render_is_empty(tmp_path: Path) -> None:
    data = base()
    folder = _write(data, tmp_path / "out")

    result = diff_sides(read_side(str(folder)), Side.of_fleet(fleet(data)))

    assert result.empty


def test_a_single_cluster_folder_is_named_after_the_folder(tmp_path: Path) -> None:
    _write(base(), tmp_path / "a")
    _write(changed(CHANGES["replicas"]), tmp_path / "b")

    result = diff_sides(read_side(str(tmp_path / "a" / "prod")), read_side(str(tmp_path / "b" / "prod")))

    assert [c.name for c in result.clusters] == ["prod"]
    assert {f.path for f in result.clusters[0].files} == {"capacity.yaml", "device-plugin-config.yaml"}


def test_hand_written_files_are_ignored_and_bad_yaml_is_an_input_error(tmp_path: Path) -> None:
    folder = _write(base(), tmp_path / "out")
    (folder / "prod" / "notes.yaml").write_text("mine: true\n")
    assert "prod/notes.yaml" not in read_rendered(folder)

    broken = folder / "prod" / "capacity.yaml"
    broken.write_text(broken.read_text().splitlines()[0] + "\npools: [unclosed\n")
    other = _write(changed(CHANGES["replicas"]), tmp_path / "new")

    with pytest.raises(DiffInputError, match=r"prod/capacity.yaml: not valid YAML"):
        diff_sides(read_side(str(folder)), read_side(str(other)))


def test_missing_inputs_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(DiffInputError, match="no such file or folder"):
        read_side(str(tmp_path / "nope"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(DiffInputError, match="no files generated by gpustack-gen"):
        read_side(str(tmp_path / "empty"))


def test_paths_quote_keys_that_are_not_plain() -> None:
    assert format_path(["data", "time-slicing-4", "resources", 0, "replicas"]) == (
        "data.time-slicing-4.resources[0].replicas"
    )
    assert format_path(["pools", NamedKey("t4"), "labels", "nvidia.com/mig.config"]) == (
        'pools[name=t4].labels["nvidia.com/mig.config"]'
    )
    assert format_path(["data", 'a"b']) == 'data["a\\"b"]'


def test_reading_a_rendered_folder_never_opens_a_fifo_and_knows_every_kind(tmp_path: Path) -> None:
    import os

    folder = _write(base(), tmp_path / "out")
    os.mkfifo(folder / "prod" / "pipe.yaml")  # opening it for reading would block forever
    files = read_rendered(folder)
    assert "prod/pipe.yaml" not in files
    assert "unknown" not in {f.kind for f in files.values()}
    assert files["prod/namespace.yaml"].kind == "namespace"
