"""The lint rules, one module each, as yamllint keeps its rules: each has an ``ID``, the document ``KINDS``
it checks (from :func:`~gpustack_gen.lint.detect.detect`) and ``check()``, and every finding it reports
carries its ID. A rule that finds a config inside another (a ConfigMap's data, Helm's ``config.data``)
hands it to that config's rule. Each module's docstring says what it checks and cites the upstream
behaviour behind each finding.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ..detect import DocumentKind
from ..locate import Source
from ..reporter import LintOptions, Reporter
from . import clusterpolicy, configmap, device_plugin_config, mig_parted_config, operator_keys, workload_values


class LintRule(Protocol):
    ID: str

    @property
    def KINDS(self) -> tuple[DocumentKind, ...]: ...  # read-only, so that a module's 1-tuple satisfies it

    def check(self, doc: Any, kind: DocumentKind, source: Source, prefix: str, r: Reporter, o: LintOptions) -> None: ...


# Each module is typed as the protocol itself, so mypy checks its names and signatures against it.
RULES: tuple[LintRule, ...] = (
    configmap,
    device_plugin_config,
    mig_parted_config,
    clusterpolicy,
    operator_keys,
    workload_values,
)
RULE_BY_KIND: Mapping[DocumentKind, LintRule] = {kind: rule for rule in RULES for kind in rule.KINDS}


def lint_document(doc: Any, kind: DocumentKind, source: Source, r: Reporter, o: LintOptions) -> None:
    """Run the rule for a document of ``kind``."""
    RULE_BY_KIND[kind].check(doc, kind, source, "", r, o)
