"""``gpustack_gen/verify/crd_defaults.py`` holds what each version's ClusterPolicy CRD defaults at the fields a
rendered patch deletes, derived here from the CRDs (``UPDATE_GOLDEN=1`` rewrites the table), and every field a
rendered patch deletes is one the table covers."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from _fleets import REPO_ROOT, branch_fleets, clusterpolicy_crd, crd_spec_schema, example_fleet, pin

from gpustack_gen import load_fleet
from gpustack_gen.compile import compile_cluster
from gpustack_gen.verify import crd_defaults
from gpustack_gen.versions.gpu_operator import OPERATOR_VERSIONS

TABLE = REPO_ROOT / "gpustack_gen" / "verify" / "crd_defaults.py"
_BEGIN = "DEFAULTS: Mapping[str, Mapping[str, Any]] = {\n"


def schema_default(spec_schema: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    """Whether the structural schema has a ``default`` at ``path`` (through ``properties``), and which."""
    node: Any = spec_schema
    for part in path.split("."):
        node = (node.get("properties") or {}).get(part) if isinstance(node, Mapping) else None
        if node is None:
            return False, None
    return "default" in node, node.get("default")


def derived_table(upstream: Path) -> dict[str, dict[str, Any]]:
    """Operator version (those whose CRD is in the upstream folder) -> deleted path -> the CRD's default."""
    table = {}
    for release in OPERATOR_VERSIONS:
        if not (upstream / "gpu-operator" / release.version / "nvidia.com_clusterpolicies.yaml").is_file():
            continue
        schema = crd_spec_schema(clusterpolicy_crd(upstream, release.version))
        found = {path: schema_default(schema, path) for path in crd_defaults.DELETED_PATHS}
        table[release.version] = {path: value for path, (has, value) in found.items() if has}
    return table


def table_text(table: Mapping[str, Mapping[str, Any]]) -> str:
    rows = "".join(f"    {version!r}: {dict(defaults)!r},\n" for version, defaults in table.items())
    return (_BEGIN + rows + "}\n").replace("'", '"')


def test_the_table_is_what_the_crds_default(upstream: Path) -> None:
    source = TABLE.read_text(encoding="utf-8")
    start = source.index(_BEGIN)
    end = source.index("}\n", source.index("\n}", start)) + 2
    wanted = table_text(derived_table(upstream))
    if os.environ.get("UPDATE_GOLDEN") == "1":
        TABLE.write_text(source[:start] + wanted + source[end:], encoding="utf-8")
        return
    assert source[start:end] == wanted, f"{TABLE} is out of date: UPDATE_GOLDEN=1 rewrites it"
    assert derived_table(upstream) == crd_defaults.DEFAULTS


def test_every_known_version_has_defaults_from_a_crd(upstream: Path) -> None:
    derived = derived_table(upstream)
    for release in OPERATOR_VERSIONS:
        stand_in = crd_defaults.STAND_INS.get(release.version)
        assert (release.version in derived) != (stand_in is not None), release.version
        assert stand_in is None or stand_in in derived, release.version
    # Read at v25.3.3 and v26.7.0: the CRD default the chart's null brings back, and its removal.
    assert derived["v25.3.3"] == {"migManager.config.name": "default-mig-parted-config"}
    assert derived["v26.7.0"] == {}


def _deleted(data: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    for key, value in data.items():
        path = f"{prefix}.{key}" if prefix else key
        if value is None:
            yield path
        elif isinstance(value, Mapping):
            yield from _deleted(value, path)


def _rendered_patches() -> Iterator[tuple[str, dict[str, Any]]]:
    fleets: dict[str, Any] = {}
    for release in OPERATOR_VERSIONS:
        fleets |= {f"{name}@{release.version}": data for name, data in branch_fleets(release).items()}
        fleets[f"example@{release.version}"] = pin(example_fleet(), release)
    for name in ("hami", "dra"):
        fleets[name] = REPO_ROOT / "examples" / name / "fleet.yaml"
    for name, data in fleets.items():
        for cluster in load_fleet(data).clusters:
            patch = next(a for a in compile_cluster(cluster) if a.kind == "clusterpolicy-patch")
            yield f"{name}/{cluster.name}", patch.documents[0]["spec"]


def test_every_field_a_patch_deletes_is_in_the_table() -> None:
    deleted = {path: name for name, patch in _rendered_patches() for path in _deleted(patch)}
    assert set(deleted) <= set(crd_defaults.DELETED_PATHS), deleted
    assert set(deleted) == set(crd_defaults.DELETED_PATHS)  # each listed path is one some patch deletes
