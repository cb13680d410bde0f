"""PromQL and alert-template text from fleet values: kube-state-metrics' names, quoted matchers, literal text.

kube-state-metrics writes an extended resource as ``resource=SanitizeLabelName(name)`` and a node label
``key`` as ``label_`` + ``toSnakeCase(SanitizeLabelName(key))`` (kubernetes/kube-state-metrics@v2.20.0
``internal/store/utils.go:38,143-159``, ``internal/store/node.go:397-410``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_INVALID_LABEL_CHARACTERS = re.compile(r"[^a-zA-Z0-9_]")
_LOWER_THEN_UPPER = re.compile(r"([a-z0-9])([A-Z])")


def sanitized(name: str) -> str:
    """``nvidia.com/gpu`` -> ``nvidia_com_gpu``: SanitizeLabelName."""
    return _INVALID_LABEL_CHARACTERS.sub("_", name)


def label_metric_name(key: str) -> str:
    """The ``kube_node_labels`` label of node label ``key``: ``nvidia.com/mig.config.state`` ->
    ``label_nvidia_com_mig_config_state``."""
    return "label_" + _LOWER_THEN_UPPER.sub(r"\1_\2", sanitized(key)).lower()


def quoted(value: str) -> str:
    """A PromQL string literal."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def matchers(pairs: Iterable[tuple[str, str]]) -> str:
    """``{a="x",b="y"}`` with equality matchers."""
    return "{" + ",".join(f"{name}={quoted(value)}" for name, value in pairs) + "}"


def regex_alternatives(values: Iterable[str]) -> str:
    """A regex matching exactly ``values`` (PromQL anchors =~ matchers)."""
    return "|".join(re.escape(v) for v in values)


def template_literal(text: str) -> str:
    """``text`` shown as it is in an alert's annotation, which Prometheus expands as a Go template."""
    return text.replace("{{", '{{ "{{" }}')
