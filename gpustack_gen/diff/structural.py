"""Document-level diff of two rendered bundles, per cluster and file.

Cheap first: a file whose document texts and header notes are equal is skipped without parsing.
Only documents whose text differs are normalized and deep-diffed (deepdiff, imported on first use):

- YAML strings inside a ConfigMap's ``data`` are parsed, so a changed replicas count shows as
  ``data.time-slicing-4.sharing.timeSlicing.resources[0].replicas: 4 -> 5``, not as a changed blob;
- a ConfigMap key removed while a key of the same shape is added (``time-slicing-4`` ->
  ``time-slicing-5``) is reported as a rename followed by the value's own changes under the old key;
- the ``pools`` lists of ``capacity.yaml`` and ``node-labels.yaml`` are matched by pool name
  (``pools[name=t4].total["nvidia.com/gpu"]``), so removing one pool does not shift the others.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..change.sides import DiffInputError, SourceFile
from ..compile.artifact import EmbeddedYaml
from ..yamlio.load import load_data
from .result import Change, ClusterDiff, DocumentDiff, FileDiff, Status

_SIMPLE_KEY = re.compile(r"[A-Za-z0-9_-]+\Z")
_SEPARATOR = re.compile(r"^---[ \t]*$", re.MULTILINE)


class NamedKey(str):
    """A list item keyed by its ``name`` (shown as ``[name=...]`` in paths)."""

    __slots__ = ()


def split_text(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(header notes, document texts): the notes skip the marker and the Source line, which names the input."""
    lines = text.split("\n")
    header_end = 0
    while header_end < len(lines) and lines[header_end].startswith("#"):
        header_end += 1
    notes = tuple(lines[2:header_end])
    body = "\n".join(lines[header_end:])
    documents = tuple(part.strip("\n") for part in _SEPARATOR.split(body))
    return notes, tuple(d for d in documents if d.strip())


def diff_files(old: Mapping[str, SourceFile], new: Mapping[str, SourceFile]) -> list[ClusterDiff]:
    """Per-cluster file differences of two sides (clusters and files sorted by name; unchanged ones left out)."""
    old_by_cluster = _by_cluster(old.values())
    new_by_cluster = _by_cluster(new.values())
    clusters: list[ClusterDiff] = []
    for name in sorted(old_by_cluster.keys() | new_by_cluster.keys()):
        old_files = old_by_cluster.get(name, {})
        new_files = new_by_cluster.get(name, {})
        files: list[FileDiff] = []
        for path in sorted(old_files.keys() | new_files.keys()):
            before, after = old_files.get(path), new_files.get(path)
            if before is None:
                assert after is not None
                files.append(FileDiff(path, after.kind, Status.ADDED))
            elif after is None:
                files.append(FileDiff(path, before.kind, Status.REMOVED))
            else:
                changed = diff_file(before, after)
                if changed is not None:
                    files.append(changed)
        if not files:
            continue
        status = Status.ADDED if not old_files else Status.REMOVED if not new_files else Status.CHANGED
        clusters.append(ClusterDiff(name, status, tuple(files)))
    return clusters


def _by_cluster(files: Iterable[SourceFile]) -> dict[str, dict[str, SourceFile]]:
    result: dict[str, dict[str, SourceFile]] = {}
    for file in files:
        result.setdefault(file.cluster, {})[file.name] = file
    return result


def diff_file(old: SourceFile, new: SourceFile) -> FileDiff | None:
    """The differences of one file present on both sides, or None when only the Source line differs."""
    old_notes, old_texts = split_text(old.text)
    new_notes, new_texts = split_text(new.text)
    notes = _note_changes(old_notes, new_notes)
    if old_texts == new_texts and not notes:
        return None
    documents: list[DocumentDiff] = []
    if old_texts != new_texts:
        documents = _diff_documents(old, old_texts, new, new_texts)
    if not documents and not notes:
        return None
    return FileDiff(new.name, new.kind, Status.CHANGED, tuple(documents), notes)


def _note_changes(old: tuple[str, ...], new: tuple[str, ...]) -> tuple[Change, ...]:
    if old == new:
        return ()
    old_text = "\n".join(line.removeprefix("# ") for line in old)
    new_text = "\n".join(line.removeprefix("# ") for line in new)
    return (Change("(header)", "changed", old_text, new_text),)


def _diff_documents(
    old: SourceFile, old_texts: tuple[str, ...], new: SourceFile, new_texts: tuple[str, ...]
) -> list[DocumentDiff]:
    old_docs = load_documents(old)
    new_docs = load_documents(new)
    old_ids = _identities(old_docs)
    new_ids = _identities(new_docs)
    old_index = {identity: i for i, identity in enumerate(old_ids)}
    result: list[DocumentDiff] = []
    matched: set[str] = set()
    for i, identity in enumerate(new_ids):
        j = old_index.get(identity)
        if j is None:
            result.append(DocumentDiff(i, identity, Status.ADDED))
            continue
        matched.add(identity)
        same_text = j < len(old_texts) and i < len(new_texts) and old_texts[j] == new_texts[i]
        if same_text:
            continue
        changes = diff_documents(old_docs[j], new_docs[i])
        if changes:
            result.append(DocumentDiff(i, identity, Status.CHANGED, tuple(changes)))
    for j, identity in enumerate(old_ids):
        if identity not in matched:
            result.append(DocumentDiff(j, identity, Status.REMOVED))
    return result


def _identities(documents: list[Any]) -> list[str]:
    """How documents are matched across sides: Kubernetes objects by kind/namespace/name, others by position."""
    identities = []
    for i, doc in enumerate(documents):
        identity = f"document {i + 1}"
        if isinstance(doc, dict) and isinstance(doc.get("kind"), str) and isinstance(doc.get("metadata"), dict):
            meta = doc["metadata"]
            name = meta.get("name")
            if isinstance(name, str):
                namespace = meta.get("namespace")
                identity = (
                    f"{doc['kind']} {namespace}/{name}" if isinstance(namespace, str) else f"{doc['kind']} {name}"
                )
        identities.append(identity)
    return identities


# --- normalization ------------------------------------------------------------------------------


def load_documents(file: SourceFile) -> list[Any]:
    """The file's documents as plain data, ready to compare (see the module docstring)."""
    if file.documents is not None:
        raw: list[Any] = [_plain(doc) for doc in file.documents]
    else:
        _, texts = split_text(file.text)
        try:
            raw = [load_data(text) for text in texts]
        except Exception as exc:  # ruamel raises many error types; all mean "not YAML"
            raise DiffInputError(f"{file.path}: not valid YAML: {' '.join(str(exc).split())}") from None
        raw = [_parse_configmap_data(doc) for doc in raw]
    return [_key_pools(doc) for doc in raw]


def _plain(data: Any) -> Any:
    if isinstance(data, EmbeddedYaml):
        return _plain(data.data)
    if isinstance(data, dict):
        return {key: _plain(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [_plain(item) for item in data]
    return data


def _parse_configmap_data(doc: Any) -> Any:
    if not (isinstance(doc, dict) and doc.get("kind") == "ConfigMap" and isinstance(doc.get("data"), dict)):
        return doc
    data = {}
    for key, value in doc["data"].items():
        parsed = value
        if isinstance(value, str):
            try:
                loaded = load_data(value)
            except Exception:
                loaded = None
            if isinstance(loaded, dict | list):
                parsed = loaded
        data[key] = parsed
    return {**doc, "data": data}


def _key_pools(doc: Any) -> Any:
    if not isinstance(doc, dict):
        return doc
    pools = doc.get("pools")
    if not isinstance(pools, list) or not all(isinstance(p, dict) and isinstance(p.get("name"), str) for p in pools):
        return doc
    names = [p["name"] for p in pools]
    if len(set(names)) != len(names):
        return doc
    return {**doc, "pools": {NamedKey(p["name"]): p for p in pools}}


# --- deep diff ----------------------------------------------------------------------------------

_ADDED = {"dictionary_item_added", "iterable_item_added", "attribute_added", "set_item_added"}
_REMOVED = {"dictionary_item_removed", "iterable_item_removed", "attribute_removed", "set_item_removed"}


def diff_documents(old: Any, new: Any) -> list[Change]:
    """Changed paths between two plain documents, sorted by path."""
    is_configmap = isinstance(new, dict) and new.get("kind") == "ConfigMap"
    raw = _deep(old, new, ())
    if is_configmap:
        raw = _pair_renames(raw)
    changes = [
        Change(format_path(elements), kind, old_value, new_value) for elements, kind, old_value, new_value in raw
    ]
    return sorted(changes, key=lambda c: (c.path, c.kind != "renamed"))


_Raw = tuple[tuple[Any, ...], str, Any, Any]


def _deep(old: Any, new: Any, prefix: tuple[Any, ...]) -> list[_Raw]:
    from deepdiff import DeepDiff

    tree = DeepDiff(old, new, view="tree", verbose_level=2)
    found: list[_Raw] = []
    for report_type, items in tree.items():
        for item in items:
            elements = prefix + tuple(item.path(output_format="list"))
            if report_type in _ADDED:
                found.append((elements, "added", None, _clean(item.t2)))
            elif report_type in _REMOVED:
                found.append((elements, "removed", _clean(item.t1), None))
            else:
                found.append((elements, "changed", _clean(item.t1), _clean(item.t2)))
    return found


def _clean(value: Any) -> Any:
    """Plain JSON-able data: pools keyed back to lists, deepdiff's not-present marker to None."""
    if isinstance(value, dict):
        if value and all(isinstance(k, NamedKey) for k in value):
            return [_clean(v) for v in value.values()]
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return None  # deepdiff's NotPresent


def _pair_renames(raw: list[_Raw]) -> list[_Raw]:
    """Pair a removed ConfigMap key with an added sibling of the same shape: a rename plus the value's changes."""
    removed = [r for r in raw if r[1] == "removed" and r[0][:1] == ("data",) and isinstance(r[2], dict | list)]
    added = [r for r in raw if r[1] == "added" and r[0][:1] == ("data",) and isinstance(r[3], dict | list)]
    if not removed or not added:
        return raw
    candidates = []
    for old_item in removed:
        old_leaves = _leaves(old_item[2])
        for new_item in added:
            if old_item[0][:-1] != new_item[0][:-1]:
                continue
            new_leaves = _leaves(new_item[3])
            if old_leaves.keys() != new_leaves.keys():
                continue
            distance = sum(old_leaves[k] != new_leaves[k] for k in old_leaves)
            candidates.append((distance, str(old_item[0][-1]), str(new_item[0][-1]), old_item, new_item))
    candidates.sort(key=lambda c: (c[0], c[1], c[2]))
    used_old: set[int] = set()
    used_new: set[int] = set()
    candidate_ids = {id(r) for r in removed} | {id(r) for r in added}
    result = [r for r in raw if id(r) not in candidate_ids]
    for _, _, _, old_item, new_item in candidates:
        if id(old_item) in used_old or id(new_item) in used_new:
            continue
        used_old.add(id(old_item))
        used_new.add(id(new_item))
        elements = old_item[0]
        result.append((elements, "renamed", elements[-1], new_item[0][-1]))
        result.extend(_deep(old_item[2], new_item[3], elements))
    result += [r for r in removed if id(r) not in used_old]
    result += [r for r in added if id(r) not in used_new]
    return result


def _leaves(value: Any, prefix: tuple[Any, ...] = ()) -> dict[tuple[Any, ...], Any]:
    if isinstance(value, dict):
        out: dict[tuple[Any, ...], Any] = {}
        for key, item in value.items():
            out.update(_leaves(item, (*prefix, key)))
        return out or {prefix: {}}
    if isinstance(value, list):
        out = {}
        for index, item in enumerate(value):
            out.update(_leaves(item, (*prefix, index)))
        return out or {prefix: []}
    return {prefix: value}


def format_path(elements: Iterable[Any]) -> str:
    """``data.time-slicing-4.sharing.timeSlicing.resources[0].replicas``; keys with dots or slashes quoted."""
    text = ""
    for element in elements:
        if isinstance(element, NamedKey):
            text += f"[name={element}]"
        elif isinstance(element, int):
            text += f"[{element}]"
        elif _SIMPLE_KEY.match(str(element)):
            text += f".{element}" if text else str(element)
        else:
            escaped = str(element).replace("\\", "\\\\").replace('"', '\\"')
            text += f'["{escaped}"]'
    return text
