"""schemas/fleet.schema.json is public API: it must equal what the models generate, and accept the examples."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from ruamel.yaml import YAML

from gpustack_gen.model.intent import fleet_json_schema

ROOT = Path(__file__).resolve().parent.parent


def test_committed_schema_is_in_sync() -> None:
    committed = json.loads((ROOT / "schemas" / "fleet.schema.json").read_text(encoding="utf-8"))
    assert committed == fleet_json_schema(), "regenerate: gpustack-gen schema > schemas/fleet.schema.json"


def test_schema_is_valid_draft7_and_accepts_the_example() -> None:
    schema = fleet_json_schema()
    jsonschema.Draft7Validator.check_schema(schema)
    example = YAML(typ="safe").load((ROOT / "examples" / "fleet.yaml").read_text(encoding="utf-8"))
    jsonschema.Draft7Validator(schema).validate(example)


def test_schema_rejects_an_unknown_key() -> None:
    schema = fleet_json_schema()
    bad = {"apiVersion": "gpustack-gen/v1alpha1", "kind": "Fleet", "clusters": [], "extra": 1}
    assert not jsonschema.Draft7Validator(schema).is_valid(bad)


def test_every_property_has_a_description() -> None:
    missing = []
    schema = fleet_json_schema()
    for name, definition in [("FleetSpec", schema), *schema["definitions"].items()]:
        for prop, body in definition.get("properties", {}).items():
            if "description" not in body:
                missing.append(f"{name}.{prop}")
    assert not missing, missing


def test_public_api_exports_match_the_lazy_table() -> None:
    import gpustack_gen

    assert sorted(gpustack_gen.__all__) == sorted([*gpustack_gen._EXPORTS, "__version__"])
    for name in gpustack_gen.__all__:
        assert getattr(gpustack_gen, name) is not None
