"""``plan --write-retired``: add to the NEW fleet file the ``retired`` entries its refused change needs.

The entries are the retention rule's own (:func:`~gpustack_gen.change.rules.retention.retired_entries`): one
per label the old nodes carry and the new ConfigMaps drop, so none is one that the prune rule would drop in
the same change. The file is edited with ruamel's round trip, which keeps comments and quoting, and only
when an unchanged round trip gives back its exact bytes (:func:`~gpustack_gen.yamlio.edit.load_for_edit`):
nothing but the new entries moves. It is written only when the result loads, needs no further entry and
leaves every other cluster as it was, and atomically (:func:`~gpustack_gen.emit.single_file.write_new_file`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..change.context import ClusterChange
from ..change.rules.retention import retired_entries
from ..change.sides import Side
from ..emit.single_file import write_new_file
from ..errors import FleetError, InputError, InternalError
from ..model import load_fleet
from ..model.fleet import Fleet
from ..workdir import Paths
from ..yamlio.edit import flow_mapping, load_for_edit
from ..yamlio.input_file import InputFileError, read_input_bytes
from ..yamlio.limits import MAX_FLEET_BYTES

__all__ = ["RetiredWriteError", "needed_retired", "with_retired", "write_retired", "write_retired_sides"]


class RetiredWriteError(InputError):
    """The entries cannot be written: the fleet is not a local file, or they cannot be placed in it."""


def needed_retired(old: Fleet, new: Fleet, clusters: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """Cluster name -> the ``retired`` block its change needs, for the clusters on both sides that need one."""
    wanted = set(clusters) if clusters is not None else None
    before = {c.name: c for c in old.clusters}
    needed = {}
    for cluster in new.clusters:
        if cluster.name not in before or (wanted is not None and cluster.name not in wanted):
            continue
        block = retired_entries(ClusterChange(before[cluster.name], cluster, Paths()))
        if block:
            needed[cluster.name] = block
    return needed


def with_retired(text: str, label: str, needed: Mapping[str, Mapping[str, Any]]) -> str:
    """``text`` with each cluster's block merged into its ``retired``, every other byte as it was."""
    from ruamel.yaml.error import YAMLError

    try:
        document = load_for_edit(text)
    except YAMLError as exc:
        raise RetiredWriteError(f"{label}: not YAML ({exc})") from None
    if document is None:
        raise RetiredWriteError(
            f"{label}: its layout would change when rewritten (indentation other than two spaces, or a construct "
            "the round trip does not keep); add the retired entry by hand"
        )
    root = document.root
    clusters = root.get("clusters") if hasattr(root, "get") else None
    if not isinstance(clusters, list):
        raise RetiredWriteError(f"{label}: no clusters list to add retired entries to")
    by_name = {entry.get("name"): entry for entry in clusters if hasattr(entry, "get")}
    for name, block in needed.items():
        entry = by_name.get(name)
        if entry is None:
            raise RetiredWriteError(
                f"{label}: cluster {name} is not written in this file; add its retired entry by hand"
            )
        _merge(entry, block, label, name)
    return document.dump()


def write_retired(path: Path, old: Fleet, new: Fleet, clusters: Iterable[str] | None = None) -> dict[str, Any]:
    """Add the needed ``retired`` entries to the fleet file ``path`` (NEW) atomically; the blocks added.

    Nothing is written when no entry is needed, or on any error (:class:`RetiredWriteError`).
    """
    needed = needed_retired(old, new, clusters)
    if not needed:
        return {}
    label = str(path)
    try:
        text = read_input_bytes(path, MAX_FLEET_BYTES).decode("utf-8")
    except (InputFileError, UnicodeDecodeError) as exc:
        raise RetiredWriteError(f"{label}: cannot read it to add retired entries: {exc}") from None
    written = with_retired(text, label, needed)
    _check(written, label, old, new, needed)
    write_new_file(path, written, force=True)
    return needed


def write_retired_sides(old: Side, new: Side, clusters: Iterable[str] | None = None) -> tuple[Side, dict[str, Any]]:
    """NEW as it reads once the entries are written (itself when none is needed), and the blocks added.

    NEW must be a fleet file in the working tree: a side read from git or a rendered folder is refused.
    """
    if old.fleet is None or new.fleet is None or new.path is None:
        raise RetiredWriteError(
            f"{new.label}: --write-retired needs OLD and NEW as fleet files, NEW one in the working tree"
        )
    added = write_retired(Path(new.path), old.fleet, new.fleet, clusters)
    if not added:
        return new, added
    return Side.of_fleet(load_fleet(Path(new.path), name=new.fleet.source), new.label, new.path), added


def _merge(cluster: Any, block: Mapping[str, Any], label: str, name: str) -> None:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    retired = cluster.get("retired")
    if retired is None:
        retired = CommentedMap()
        cluster["retired"] = retired
    elif not isinstance(retired, dict):
        raise RetiredWriteError(f"{label}: clusters.{name}.retired is not a mapping; fix it first")
    for kind, entries in block.items():
        present = retired.get(kind)
        if isinstance(entries, dict):
            if present is None:
                present = retired[kind] = CommentedMap()
            if not isinstance(present, dict):
                raise RetiredWriteError(f"{label}: clusters.{name}.retired.{kind} is not a mapping; fix it first")
            for key, policy in entries.items():
                present[key] = flow_mapping(policy)
        else:
            if present is None:
                present = retired[kind] = CommentedSeq()
            if not isinstance(present, list):
                raise RetiredWriteError(f"{label}: clusters.{name}.retired.{kind} is not a list; fix it first")
            present.extend(_entry(item) for item in entries)


def _entry(item: Mapping[str, Any]) -> Any:
    """A retired MIG config as a block mapping whose nested layout is one flow line."""
    from ruamel.yaml.comments import CommentedMap

    entry = CommentedMap()
    for key, value in item.items():
        entry[key] = flow_mapping(value) if isinstance(value, dict) else value
    return entry


def _check(written: str, label: str, old: Fleet, new: Fleet, needed: Mapping[str, Any]) -> None:
    """The written file loads, its change needs no further entry, and no other cluster changed."""
    try:
        fleet = load_fleet(written, name=label)
    except FleetError as exc:  # the retention rule asked for an entry the model rejects
        raise InternalError("retired entries", label, f"they do not load: {exc}") from None
    others = [c for c in new.clusters if c.name not in needed]
    if (
        needed_retired(old, fleet)
        or len(fleet.clusters) != len(new.clusters)
        or any(fleet.cluster(c.name) != c for c in others)
    ):
        raise RetiredWriteError(f"{label}: the retired entries could not be placed as the change needs them")
