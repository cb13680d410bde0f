"""A schema with its references (``$ref``) replaced by what they point to, built once per schema.

``jsonschema`` resolves a ``$ref`` each time validation passes it (a registry lookup and a new
validator per reference), which was a fifth of the time spent validating Kubernetes objects. Inlining
does that work once per schema instead. The result validates exactly as the original does under draft
2020-12: a reference alone becomes its target; one with siblings (in the Kubernetes schemas, its own
``description``, which findings quote as a hint) becomes ``allOf: [target]`` beside them, so that every
error names the same schema as before; a reference back into a definition being inlined (a recursive schema) stays a
``$ref``, made absolute so that the registry resolves it from anywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin

# Keywords whose value maps names to schemas (a key there is a name, even "$ref"), or lists schemas.
_NAMED_SCHEMAS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly"})


def inline_refs(schema: Mapping[str, Any], base_uri: str, registry: Any) -> Any:
    """``schema`` (at ``base_uri``) with every reference the ``referencing`` ``registry`` resolves inlined.

    Assumes no ``$id`` below the top of a resource (true of the Kubernetes schemas): a target's base is
    its document's URI.
    """
    return _Inliner(registry).schema(schema, base_uri, ())


class _Inliner:
    def __init__(self, registry: Any) -> None:
        self._resolver = registry.resolver()
        self._done: dict[str, Any] = {}  # absolute reference -> its inlined target (shared, read-only)

    def schema(self, node: Any, base: str, active: tuple[str, ...]) -> Any:
        if not isinstance(node, Mapping):
            return node
        if isinstance(node.get("$ref"), str):
            return self._reference(node, base, active)
        return self._children(node, base, active)

    def _children(self, node: Mapping[str, Any], base: str, active: tuple[str, ...]) -> Mapping[str, Any]:
        """``node`` with its subschemas inlined; ``node`` itself where nothing below it changes (memory)."""
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _NAMED_SCHEMAS and isinstance(value, Mapping):
                named = {name: self.schema(sub, base, active) for name, sub in value.items()}
                out[key] = value if all(named[name] is sub for name, sub in value.items()) else named
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                listed = [self.schema(sub, base, active) for sub in value]
                out[key] = value if all(a is b for a, b in zip(listed, value, strict=True)) else listed
            elif key in _ANNOTATIONS or key in ("enum", "const", "required") or key.startswith("x-"):
                out[key] = value  # data, not schemas
            else:
                out[key] = self.schema(value, base, active)
        return node if all(out[key] is value for key, value in node.items()) else out

    def _reference(self, node: Mapping[str, Any], base: str, active: tuple[str, ...]) -> Any:
        uri = urljoin(base, node["$ref"])
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if uri in active:  # recursive: keep the reference
            target: Any = {"$ref": uri}
        elif uri in self._done:
            target = self._done[uri]
        else:
            contents = self._resolver.lookup(uri).contents
            target = self.schema(contents, uri.partition("#")[0], (*active, uri))
            self._done[uri] = target
        if not siblings:
            return target
        return {**self._children(siblings, base, active), "allOf": [target]}
