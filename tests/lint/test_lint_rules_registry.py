"""Lint's rules are a registry: every document kind lint checks has one rule, every rule id is unique and
kebab-case like its module's name, findings carry the id of the rule that found them, and the --format
choices are the report table's."""

from __future__ import annotations

import re

from gpustack_gen.cli import _LINT_FORMATS
from gpustack_gen.lint import LINT_REPORTS, default_options, lint_text
from gpustack_gen.lint.detect import LINTED_KINDS
from gpustack_gen.lint.rules import RULE_BY_KIND, RULES


def test_every_linted_kind_has_exactly_one_rule() -> None:
    kinds = [kind for rule in RULES for kind in rule.KINDS]
    assert sorted(kinds) == sorted(set(kinds)) == sorted(LINTED_KINDS)
    assert set(RULE_BY_KIND) == LINTED_KINDS


def test_rule_ids_name_their_modules() -> None:
    ids = [rule.ID for rule in RULES]
    assert len(ids) == len(set(ids))
    for rule in RULES:
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", rule.ID)
        assert getattr(rule, "__name__").rsplit(".", 1)[1] == rule.ID.replace("-", "_")  # noqa: B009


def test_findings_carry_the_rule_that_found_them() -> None:
    text = """apiVersion: v1
kind: ConfigMap
metadata: {name: plugin, namespace: kube-system}
data:
  any: |
    version: v1
    sharing:
      timeSlicing:
        resources: [{name: nvidia.com/gpu, replicas: 1}]
"""
    problems, _, _ = lint_text(text, "cm.yaml", default_options())
    assert {(p.path, p.rule) for p in problems} == {
        ("metadata.namespace", "configmap"),
        ("data.any.sharing.timeSlicing.resources[0].replicas", "device-plugin-config"),
    }


def test_values_findings_name_operator_keys_and_the_embedded_configs_rules() -> None:
    text = """devicePlugins: {enabled: true}
migManager:
  config:
    create: true
    name: mig
    data:
      mig.yaml: "version: v1"
"""
    problems, _, _ = lint_text(text, "values.yaml", default_options())
    rules = {p.path: p.rule for p in problems}
    assert rules["devicePlugins"] == "operator-keys"
    assert rules['migManager.config.data["mig.yaml"]'] == "mig-parted-config"


def test_format_choices_are_the_report_table() -> None:
    assert tuple(LINT_REPORTS) == _LINT_FORMATS
