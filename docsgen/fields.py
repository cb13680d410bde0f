"""The fleet field reference (``docs/reference/fields.md``), generated from the fleet's JSON Schema.

One section per object, in the order a reader meets them from the top of the file; each row is a field with
its type (linked to the object it holds), whether it is required, its constraints and the schema's description.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from gpustack_gen.model.intent import fleet_json_schema

ROOT = "Fleet"
INTRO = (
    "# Fleet file fields\n\n"
    "<!-- Generated from the fleet's JSON Schema (gpustack-gen schema): run the tests with UPDATE_GOLDEN=1"
    " to regenerate. -->\n\n"
    "Every field of the fleet file, generated from its JSON Schema (`gpustack-gen schema`, also committed as"
    " `schemas/fleet.schema.json`). Unknown keys are errors. Every section after the first is an object that a"
    " field above it holds; `defaults` takes the same fields as a cluster, except `name`, `nodePools`,"
    " `workloads` and `retired`.\n"
)


def render_fields(schema: Mapping[str, Any] | None = None) -> str:
    schema = fleet_json_schema() if schema is None else schema
    definitions: Mapping[str, Any] = schema.get("definitions", {})
    sections = [_section(ROOT, schema)]
    sections += [_section(name, definitions[name]) for name in _reading_order(schema, definitions)]
    return INTRO + "".join(sections)


def _reading_order(schema: Mapping[str, Any], definitions: Mapping[str, Any]) -> list[str]:
    """Definitions depth-first from the root, so that each section follows the one that first names it."""
    seen: list[str] = []

    def visit(node: Mapping[str, Any]) -> None:
        for ref in _refs(node):
            if ref not in seen:
                seen.append(ref)
                visit(definitions[ref])

    visit(schema)
    return seen + sorted(set(definitions) - set(seen))


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, Mapping):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref.rsplit("/", 1)[-1]
        for key, value in node.items():
            if key != "$ref":
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _section(name: str, node: Mapping[str, Any]) -> str:
    lines = [f"\n## {name}", ""]
    if node.get("description"):
        lines += [_one_line(node["description"]), ""]
    properties: Mapping[str, Any] = node.get("properties", {})
    required = set(node.get("required", ()))
    lines += ["| field | type | required | constraints | description |", "|---|---|---|---|---|"]
    for field, spec in properties.items():
        cells = [f"`{field}`", _type(spec), "yes" if field in required else "", _constraints(spec)]
        lines.append("| " + " | ".join([*cells, _cell(spec.get("description", ""))]) + " |")
    return "\n".join(lines) + "\n"


def _type(spec: Mapping[str, Any]) -> str:
    if "$ref" in spec:
        target = spec["$ref"].rsplit("/", 1)[-1]
        return f"[{target}](#{target.lower()})"
    for union in ("anyOf", "oneOf"):
        if union in spec:
            return " or ".join(_type(option) for option in spec[union])
    kind = spec.get("type")
    if kind == "array":
        return f"list of {_type(spec.get('items', {}))}"
    if kind == "object" and isinstance(spec.get("additionalProperties"), Mapping):
        return f"map of {_type(spec['additionalProperties'])}"
    if isinstance(kind, list):
        return " or ".join(kind)
    return str(kind) if kind else "any"


def _constraints(spec: Mapping[str, Any]) -> str:
    found = []
    if "const" in spec:
        found.append(f"always `{json.dumps(spec['const'])}`")
    if "enum" in spec:
        found.append("one of " + ", ".join(f"`{json.dumps(value)}`" for value in spec["enum"]))
    for key, label in (
        ("minimum", ">="),
        ("maximum", "<="),
        ("exclusiveMinimum", ">"),
        ("minLength", "length >="),
        ("maxLength", "length <="),
        ("minItems", "items >="),
        ("maxItems", "items <="),
    ):
        if key in spec:
            found.append(f"{label} {spec[key]}")
    if "pattern" in spec:
        found.append(f"matches `{spec['pattern']}`")
    if "default" in spec:
        found.append(f"default `{json.dumps(spec['default'])}`")
    return _cell("; ".join(found))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cell(text: str) -> str:
    """Text fit for one table cell: one line, pipes escaped."""
    return _one_line(text).replace("|", "\\|")
