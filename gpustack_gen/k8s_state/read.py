"""Read the objects of parsed documents into typed objects, by (apiVersion, kind), opening lists once.

``kubectl get -o json`` writes a ``kind: List`` whose items name their kind; the API server answers a list
request with ``kind: NodeList`` (``PodList``...) whose items name none: both are opened here, and each
object is read by the reader registered for its (apiVersion, kind) in :data:`~.objects.READERS`. A document
of a kind the caller does not accept is a problem located at its line, worded by the caller, who knows
which option or file it belongs in.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any

from ..errors import MAX_PROBLEMS, Problem, more_problems
from .load import Document, Where
from .objects import API_VERSIONS, READERS, KubeObject, MalformedField, metadata

WrongKind = Callable[[Any, int, str], Problem]  # (the document, its line, its path) -> the problem to report


def list_items(data: Mapping[str, Any]) -> list[Any]:
    items = data.get("items")
    return items if isinstance(items, list) else []


def describe(data: Any) -> str:
    """How a message names a document: ``a ConfigMap (plugin)``, ``a List of Node, Pod``, ``a list``."""
    if not isinstance(data, dict):
        return f"a {type(data).__name__}"
    kind = data.get("kind")
    if not isinstance(kind, str) or not kind:
        return "a mapping without kind"
    if kind == "List":
        kinds = list_kinds(data)
        return "a List" + (f" of {', '.join(kinds)}" if kinds else "")
    name = metadata(data).get("name")
    return f"a {kind}" + (f" ({name})" if isinstance(name, str) and name else "")


def list_kinds(data: Mapping[str, Any]) -> list[str]:
    """The kinds of a ``kind: List``'s items, sorted."""
    return sorted({str(i.get("kind")) for i in list_items(data) if isinstance(i, dict) and i.get("kind")})


def unwrap(docs: Sequence[Document], kinds: Collection[str]) -> Iterator[tuple[Any, int, str]]:
    """Each object of the documents with its line and path, lists (``List``, ``<kind>List``) opened."""
    for doc in docs:
        data = doc.data
        list_kind = data.get("kind") if isinstance(data, dict) else None
        item_kind = list_kind[: -len("List")] if isinstance(list_kind, str) and list_kind.endswith("List") else None
        if list_kind != "List" and item_kind not in kinds:
            yield data, doc.line, ""
            continue
        for index, item in enumerate(list_items(data)):
            if isinstance(item, dict) and item_kind and "kind" not in item:
                # The API server's <kind>List: its items carry neither kind nor apiVersion.
                item = {**item, "kind": item_kind}
                if "apiVersion" not in item and isinstance(data.get("apiVersion"), str):
                    item["apiVersion"] = data["apiVersion"]
            yield item, doc.item_line(index), f"items[{index}]"


def read_objects(
    label: str,
    docs: Sequence[Document],
    kinds: Collection[str],
    wrong_kind: WrongKind,
    problems: list[Problem],
    *,
    any_api_version: bool = False,
) -> list[KubeObject]:
    """The objects of ``kinds`` in ``docs``, read by their (apiVersion, kind); everything else is a problem.

    An object without apiVersion is read as its kind's known version. ``any_api_version`` reads a known kind
    whatever apiVersion it names (``import`` has always read by kind); otherwise an unknown apiVersion is
    refused, since its fields may mean something else.
    """
    found: list[KubeObject] = []
    first = len(problems)
    skipped, last_line = 0, 0
    for data, line, path in unwrap(docs, kinds):
        if len(problems) - first >= MAX_PROBLEMS:  # the rest are counted, not read: see errors.MAX_PROBLEMS
            skipped, last_line = skipped + 1, line
            continue
        kind = data.get("kind") if isinstance(data, dict) else None
        if not isinstance(data, dict) or kind not in kinds:
            problems.append(wrong_kind(data, line, path))
            continue
        api_version = data.get("apiVersion")
        if api_version is None or any_api_version:
            api_version = API_VERSIONS.get(str(kind))
        reader = READERS.get((str(api_version), str(kind)))
        if reader is None:
            problems.append(
                Problem(
                    label,
                    line,
                    1 if line else 0,
                    path,
                    f"a {kind} of apiVersion {data.get('apiVersion')}; gpustack-gen reads "
                    + " or ".join(version for version, known in READERS if known == kind),
                    "write it again with kubectl get ... -o json, which gives the served version",
                )
            )
            continue
        try:
            result = reader(data, Where(label, line))
        except MalformedField as exc:
            result = f"a {kind}: {exc}"
        if isinstance(result, str):
            problems.append(Problem(label, line, 1 if line else 0, path, result))
        else:
            found.append(result)
    if skipped:
        problems.append(
            Problem(label, last_line, 0, "", f"{more_problems(skipped)}: items not read after {MAX_PROBLEMS} problems")
        )
    return found
