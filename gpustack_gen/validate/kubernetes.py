"""Validate Kubernetes objects against the strict OpenAPI-derived schemas of a Kubernetes minor version.

The schemas are the ``v<minor>-local-strict`` folders shipped inside the ``kubernetes-validate``
package (``<kind>-<apiversion>.json`` per kind plus a shared ``_definitions.json``). We read those
files directly instead of calling ``kubernetes_validate.validate``, which loads and parses both JSON
files again on every call: here each (schema folder, kind) gets one compiled ``jsonschema`` validator
per process (:func:`kubernetes_validator`), and each folder's ``_definitions.json`` is parsed once.

Schema version selection follows ``kubernetes-validate``: the newest schema version that is not newer
than the cluster's minor version. A cluster newer than the newest shipped schema is checked against
the newest one (the API rarely removes fields; new fields would be reported as unknown, which for the
objects gpustack-gen writes would be a bug anyway). A cluster older than the oldest shipped schema is
checked against the oldest one: the objects we write (ConfigMaps, container resources, nodeSelector,
tolerations) have not changed shape since long before that, so the oldest schema is a fair stand-in.

Workload fragments are not Kubernetes objects: they are the ``resources``, ``nodeSelector``,
``tolerations`` and (DRA) ``resourceClaims`` of a pod. :func:`check_workload_fragment` wraps them into a minimal Pod, validates that,
and reports paths relative to the fragment. The schemas accept any string as a quantity, so resource
quantities are also checked against the Kubernetes quantity grammar.

``jsonschema``, ``referencing`` and ``kubernetes_validate`` are imported lazily: importing this module
costs nothing at CLI start-up. Pure: no printing. Workload fragment findings are memoised on the
schema version and the fragment's content: the same resources, selectors and tolerations repeat.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..model.names import QUANTITY
from .findings import SchemaFinding, describe_value, findings_from_errors, format_path
from .inline_refs import inline_refs
from .memo import MEMO_SIZE, json_key
from .schema_files import SchemaValidator, compile_schema
from .shape import NotPlain, ValidShapes, checked_by_shape, schema_at, shape_key

__all__ = [
    "KubernetesSchemaNotFound",
    "check_kubernetes_object",
    "check_workload_fragment",
    "kubernetes_validator",
    "schema_dir_for",
    "schema_versions",
    "select_schema_version",
    "workload_pod",
]

MinorVersion = tuple[int, int]

_VERSION = re.compile(r"v?(\d+)\.(\d+)")
_SCHEMA_DIR = re.compile(r"v(\d+)\.(\d+)\.\d+-local-strict\Z")
_QUANTITY = re.compile(QUANTITY)
_UNKNOWN_FIELD_HINT = "the API server rejects unknown fields (kubectl apply --validate=strict)"

# Where the pod-spec parts of a workload fragment go in the wrapping Pod, and back.
_POD_PATHS: Mapping[str, tuple[object, ...]] = {
    "resources": ("spec", "containers", 0, "resources"),
    "nodeSelector": ("spec", "nodeSelector"),
    "tolerations": ("spec", "tolerations"),
    "resourceClaims": ("spec", "resourceClaims"),
}


class KubernetesSchemaNotFound(LookupError):
    """``kubernetes-validate`` ships no schema for this kind and apiVersion (or is not installed)."""


@functools.cache
def _schemas_root() -> Path:
    """The ``kubernetes-json-schema`` folder of the installed ``kubernetes-validate`` package.

    Found through the import system without importing the package (its ``__init__`` imports PyYAML,
    jsonschema and more).
    """
    spec = importlib.util.find_spec("kubernetes_validate")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location) / "kubernetes-json-schema"
        if candidate.is_dir():
            return candidate
    raise KubernetesSchemaNotFound(
        "the kubernetes-validate package (with its schemas) is not installed: pip install kubernetes-validate"
    )


@functools.cache
def schema_versions() -> tuple[MinorVersion, ...]:
    """The Kubernetes minor versions with a strict schema folder, oldest first, such as ``(1, 29)``."""
    found = []
    for entry in _schemas_root().iterdir():
        match = _SCHEMA_DIR.match(entry.name)
        if match and entry.is_dir():
            found.append((int(match.group(1)), int(match.group(2))))
    if not found:
        raise KubernetesSchemaNotFound(f"no *-local-strict schema folders in {_schemas_root()}")
    return tuple(sorted(found))


def parse_minor(kubernetes: str) -> MinorVersion:
    """``"1.29.15"``, ``"v1.29"`` -> ``(1, 29)``. Raises ValueError for anything else."""
    match = _VERSION.match(kubernetes.strip()) if isinstance(kubernetes, str) else None
    if match is None:
        raise ValueError(f"not a Kubernetes version: {kubernetes!r} (expected a version such as '1.29.15')")
    return int(match.group(1)), int(match.group(2))


def select_schema_version(kubernetes: str, available: tuple[MinorVersion, ...] | None = None) -> MinorVersion:
    """The schema version to validate a cluster of version ``kubernetes`` against.

    The newest available version not newer than the cluster's minor version; the newest for a newer
    cluster; the oldest for a cluster older than every shipped schema (see the module docstring).
    """
    versions = tuple(sorted(available if available is not None else schema_versions()))
    if not versions:
        raise KubernetesSchemaNotFound("no Kubernetes schema versions available")
    wanted = parse_minor(kubernetes)
    candidates = [v for v in versions if v <= wanted]
    return candidates[-1] if candidates else versions[0]


@functools.cache
def schema_dir_for(kubernetes: str) -> Path:
    """The strict schema folder used for a cluster of version ``kubernetes`` (one choice per version)."""
    major, minor = select_schema_version(kubernetes)
    return _schemas_root() / f"v{major}.{minor}.0-local-strict"


def _schema_file_name(kind: str, api_version: str) -> str:
    """``("ConfigMap", "v1")`` -> ``configmap-v1.json``; ``apps/v1`` -> ``apps-v1``; the group's domain is dropped."""
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    return f"{kind.lower()}-{group_version}.json"


@functools.cache
def _definitions(schema_dir: str) -> Any:
    """The ``referencing`` resource of one folder's ``_definitions.json``, parsed once per process."""
    from referencing import Resource

    with (Path(schema_dir) / "_definitions.json").open(encoding="utf-8") as handle:
        return Resource.from_contents(json.load(handle))


@functools.cache
def kind_schema(schema_dir: str, kind: str, api_version: str) -> tuple[Mapping[str, Any], str, Any]:
    """The schema file of one kind as written, its base URI and the ``referencing`` registry its references
    resolve in (with the folder's ``_definitions.json``), read once per process.

    Raises :class:`KubernetesSchemaNotFound` when the folder has no schema for that kind.
    """
    from referencing import Registry, Resource

    path = Path(schema_dir) / _schema_file_name(kind, api_version)
    if not path.is_file():
        raise KubernetesSchemaNotFound(
            f"no Kubernetes schema for kind {kind!r} apiVersion {api_version!r} in {Path(schema_dir).name}"
        )
    with path.open(encoding="utf-8") as handle:
        schema = json.load(handle)
    base = schema.get("$id", path.as_uri())
    registry: Any = Registry().with_resources(
        [
            (base, Resource.from_contents(schema)),
            ("https://kubernetes.io/api/_definitions.json", _definitions(schema_dir)),
        ]
    )
    return schema, base, registry


@functools.cache
def kubernetes_validator(schema_dir: str, kind: str, api_version: str) -> SchemaValidator:
    """One compiled validator per (schema folder, kind, apiVersion) per process, on the kind's schema with
    its references inlined (:mod:`.inline_refs`: the same verdicts, without a lookup per reference).

    Raises :class:`KubernetesSchemaNotFound` when the folder has no schema for that kind.
    """
    schema, base, registry = kind_schema(schema_dir, kind, api_version)
    return compile_schema(inline_refs(schema, base, registry), registry)


def check_kubernetes_object(document: Mapping[str, Any], kubernetes: str) -> list[SchemaFinding]:
    """Strict schema findings for one Kubernetes object (with ``apiVersion`` and ``kind``), sorted by path.

    ``kubernetes`` is the cluster's version (``"1.29.15"``). String values must already be strings:
    serialize embedded documents first. Raises :class:`KubernetesSchemaNotFound` for a kind without a
    schema and ValueError for a bad version or a document without ``apiVersion``/``kind``.
    """
    kind, api_version = document.get("kind"), document.get("apiVersion")
    if not isinstance(kind, str) or not isinstance(api_version, str):
        raise ValueError("a Kubernetes object needs string apiVersion and kind")
    schema_dir = str(schema_dir_for(kubernetes))

    def findings() -> list[SchemaFinding]:
        key = json_key(document)
        if key is None:
            return _object_findings(schema_dir, kind, api_version, document)
        return list(_memoised_object(schema_dir, kind, api_version, key))

    schema = kubernetes_validator(schema_dir, kind, api_version).schema
    return checked_by_shape(_valid_shapes, (schema_dir, kind, api_version), schema, document, findings)


_valid_shapes = ValidShapes(MEMO_SIZE)  # by (schema folder, kind, apiVersion, shape)


@functools.lru_cache(maxsize=MEMO_SIZE)
def _memoised_object(schema_dir: str, kind: str, api_version: str, key: str) -> tuple[SchemaFinding, ...]:
    # The same ConfigMap shapes recur in every cluster of a fleet: check each once per process.
    return tuple(_object_findings(schema_dir, kind, api_version, json.loads(key)))


def _object_findings(schema_dir: str, kind: str, api_version: str, document: Mapping[str, Any]) -> list[SchemaFinding]:
    validator = kubernetes_validator(schema_dir, kind, api_version)
    return findings_from_errors(validator.iter_errors(document), unknown_key_hint=_UNKNOWN_FIELD_HINT)


def workload_pod(fragment: Mapping[str, Any]) -> dict[str, Any]:
    """The minimal Pod that holds a workload fragment's ``resources``, ``nodeSelector`` and ``tolerations``."""
    container: dict[str, Any] = {"name": "x", "image": "x"}
    spec: dict[str, Any] = {"containers": [container]}
    if "resources" in fragment:
        container["resources"] = fragment["resources"]
    for key in ("nodeSelector", "tolerations", "resourceClaims"):
        if key in fragment:
            spec[key] = fragment[key]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": spec}


def _fragment_path(pod_path: str) -> str:
    for key, parts in _POD_PATHS.items():
        prefix = format_path(parts)
        if pod_path == prefix or pod_path.startswith((prefix + ".", prefix + "[")):
            return key + pod_path[len(prefix) :]
    return pod_path


def _fragment_paths_in(message: str) -> str:
    """Rewrite Pod paths quoted in a message (``did you mean spec.tolerations[0].operator?``)."""
    for key, parts in _POD_PATHS.items():
        message = message.replace(format_path(parts), key)
    return message


def _quantity_findings(resources: object) -> list[SchemaFinding]:
    """Resource values that are not quantities (the schema accepts any string or number)."""
    out: list[SchemaFinding] = []
    if not isinstance(resources, Mapping):
        return out
    for section in ("limits", "requests"):
        values = resources.get(section)
        if not isinstance(values, Mapping):
            continue
        for name, value in values.items():
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if number or (isinstance(value, str) and _QUANTITY.fullmatch(value)):
                continue
            out.append(
                SchemaFinding(
                    format_path(["resources", section, name]),
                    f"expected a Kubernetes quantity, got {describe_value(value, with_kind=True)}",
                    'write a number with an optional suffix, such as "500m", "2" or "4Gi"',
                )
            )
    return out


def check_workload_fragment(fragment: Mapping[str, Any], kubernetes: str) -> list[SchemaFinding]:
    """Findings for a workload values fragment, with paths relative to the fragment, sorted.

    Keys other than ``resources``, ``nodeSelector`` and ``tolerations`` are not pod-spec parts and are
    not checked here. Returns a new list on every call.

    Memoised per part: the three parts land in separate places of the Pod, whose schema has no rule
    across them, so the fragment's findings are the union of each part's findings, and parts repeat
    far more than whole fragments do (at 1000 generated clusters: 1,689 distinct resources, 1,000
    node selectors and 10 toleration lists in 14,929 distinct fragments).
    """
    shape = _pod_shape(fragment, kubernetes)
    if shape is not None and _valid_shapes.passed(shape):  # only the quantities, no schema's business, are left
        return sorted(set(_quantity_findings(fragment.get("resources"))))
    keys = []
    for part in _POD_PATHS:
        if part in fragment:
            key = json_key(fragment[part])
            if key is None:  # not plain JSON data: check it as it is
                return _check_fragment(fragment, kubernetes)
            keys.append((part, key))
    major, minor = select_schema_version(kubernetes)  # the findings depend on the schema, not the patch
    if not keys:
        return list(_memoised_part(major, minor, "", "null"))
    found = sorted({f for part, key in keys for f in _memoised_part(major, minor, part, key)})
    if shape is not None and not found:  # no part has a finding: the Pod holding them all passes
        _valid_shapes.remember(shape, True)
    return found


def _pod_shape(fragment: Mapping[str, Any], kubernetes: str) -> tuple[str, str, tuple[tuple[str, str], ...]] | None:
    """The shape of the fragment's Pod (``workload_pod``), as the shapes of its parts where the Pod holds them.

    The rest of that Pod is the same for every fragment, so these shapes tell Pods of one shape apart as
    the whole Pod's shape would (or more finely), without walking the rest each time.
    """
    schema_dir = str(schema_dir_for(kubernetes))
    try:
        parts = tuple(
            (part, shape_key(fragment[part], _part_schema(schema_dir, part))) for part in _POD_PATHS if part in fragment
        )
    except NotPlain:
        return None
    return (schema_dir, "Pod fragment", parts)


def _part_schema(schema_dir: str, part: str) -> Any:
    found = _part_schemas.get((schema_dir, part), _NO_SCHEMA)
    if found is _NO_SCHEMA:
        found = schema_at(kubernetes_validator(schema_dir, "Pod", "v1").schema, _POD_PATHS[part])
        _part_schemas[(schema_dir, part)] = found
    return found


_NO_SCHEMA = object()
_part_schemas: dict[tuple[str, str], Any] = {}  # the schema of each part in a Pod, per schema folder


@functools.lru_cache(maxsize=MEMO_SIZE)
def _memoised_part(major: int, minor: int, part: str, key: str) -> tuple[SchemaFinding, ...]:
    """The findings of a fragment holding only ``part`` (JSON ``key``); ``part`` "" is the empty fragment."""
    fragment = {part: json.loads(key)} if part else {}
    return tuple(_check_fragment(fragment, f"{major}.{minor}"))


def _check_fragment(fragment: Mapping[str, Any], kubernetes: str) -> list[SchemaFinding]:
    findings = check_kubernetes_object(workload_pod(fragment), kubernetes)
    quantities = _quantity_findings(fragment.get("resources"))
    superseded = {f.path for f in quantities}
    out = [SchemaFinding(_fragment_path(f.path), _fragment_paths_in(f.message), f.hint) for f in findings]
    out = [f for f in out if f.path not in superseded]
    out.extend(quantities)
    return sorted(set(out))
