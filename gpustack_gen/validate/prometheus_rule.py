"""Checks of the PrometheusRule: what the CRD says and what jsonschema cannot hold it to.

prometheus-operator@v0.93.0 ``monitoring.coreos.com_prometheusrules.yaml``: group names are unique (a
list-map keyed by ``name``, which jsonschema does not check), each rule has exactly one of ``alert`` and
``record`` and an ``expr``, ``for`` is a Prometheus duration, labels and annotations map strings to strings.
The test suite holds the same documents to the CRD itself and runs promtool on their rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ..model.intent import PROMETHEUS_DURATION
from .findings import SchemaFinding

__all__ = ["check_prometheus_rule"]

_DURATION = re.compile(PROMETHEUS_DURATION)


def _rule(path: str, rule: Mapping[str, Any]) -> Iterator[SchemaFinding]:
    if ("alert" in rule) == ("record" in rule):
        yield SchemaFinding(path, "a rule has exactly one of alert and record")
    if not isinstance(rule.get("expr"), str) or not rule["expr"].strip():
        yield SchemaFinding(f"{path}.expr", "a rule needs an expression")
    duration = rule.get("for")
    if duration is not None and not (isinstance(duration, str) and duration and _DURATION.match(duration)):
        yield SchemaFinding(f"{path}.for", f"{duration!r} is not a Prometheus duration")
    for field in ("labels", "annotations"):
        for key, value in rule.get(field, {}).items():
            if not isinstance(value, str):
                yield SchemaFinding(f"{path}.{field}.{key}", "a string")


def check_prometheus_rule(document: Mapping[str, Any]) -> list[SchemaFinding]:
    """Findings of one PrometheusRule object."""
    findings: list[SchemaFinding] = []
    seen: set[str] = set()
    for index, group in enumerate(document["spec"]["groups"]):
        name = group.get("name")
        if not name or name in seen:
            findings.append(SchemaFinding(f"spec.groups[{index}].name", f"group name {name!r} is empty or repeated"))
        seen.add(str(name))
        for number, rule in enumerate(group.get("rules", [])):
            findings += _rule(f"spec.groups[{index}].rules[{number}]", rule)
    return findings
