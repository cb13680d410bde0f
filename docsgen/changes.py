"""The change-kind pages (``docs/changes/``), generated from the rule modules' docstrings.

A rule's module docstring is its documentation, as yamllint's rule pages are its rules' docstrings: the page
says what the rule covers, at which level it lands, and which change cases under ``tests/changes/`` show it.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from gpustack_gen.change.rules import RULES

NOTE = "<!-- Generated from {source}: run the tests with UPDATE_GOLDEN=1 to regenerate. -->\n"
_ROLE = re.compile(r":(?:class|func|mod|meth|data|attr):`~?([^`]+)`")


def change_pages(cases: Path) -> dict[str, str]:
    """Page name (``<rule id>.md``, and ``index.md``) -> Markdown."""
    shown = _cases_by_rule(cases)
    pages = {f"{rule.ID}.md": _rule_page(rule.ID, rule.LEVEL, _module(rule), shown.get(rule.ID, [])) for rule in RULES}
    pages["index.md"] = _index()
    return pages


def _module(rule: object) -> str:
    """The rule's module name (each rule is a module)."""
    return str(getattr(rule, "__name__"))  # noqa: B009 - the Rule protocol does not declare it


def _rule_page(rule_id: str, level: str, module: str, cases: list[str]) -> str:
    doc = sys.modules[module].__doc__ or ""
    summary, _, body = markdown(doc).partition("\n")
    source = module.replace(".", "/") + ".py"
    lines = [f"# {rule_id}", "", NOTE.format(source=source), f"**Level:** `{level}` · **Rule module:** `{source}`", ""]
    lines += [summary, "", body.strip(), ""] if body.strip() else [summary, ""]
    if cases:
        lines += [
            "## Cases",
            "",
            "The change cases whose plan has a step from this rule (each folder holds the two fleets,",
        ]
        lines += ["the diff and the plan in every format):", ""]
        lines += [f"- `tests/changes/{case}/`" for case in cases]
        lines.append("")
    return "\n".join(lines)


def _index() -> str:
    lines = [
        "# Change kinds",
        "",
        NOTE.format(source="gpustack_gen/change/rules/"),
        "Every change `diff` reports and `plan` orders comes from one rule module in `gpustack_gen/change/rules/`;",
        "each page here is that module's docstring. Rules run in this order, and their level says how the change",
        "lands on a running cluster: `none` (apply it), `restart` (a DaemonSet or the runtime restarts; GPU pods",
        "keep running), `disruptive` (GPU pods stop or cannot schedule: drain or redeploy first) or `error`",
        "(the change cannot be rolled out as written).",
        "",
        "| rule | level | what it covers |",
        "|---|---|---|",
    ]
    for rule in RULES:
        summary = markdown(sys.modules[_module(rule)].__doc__ or "").partition("\n")[0]
        cell = summary.replace("|", "\\|")
        lines.append(f"| [{rule.ID}]({rule.ID}.md) | `{rule.LEVEL}` | {cell} |")
    return "\n".join(lines) + "\n"


def _cases_by_rule(cases: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for plan in sorted(cases.glob("*/plan.json")):
        document = json.loads(plan.read_text(encoding="utf-8"))
        rules = {step.get("rule") for cluster in document["clusters"] for step in cluster["steps"]}
        for rule in sorted(rule for rule in rules if rule):
            found.setdefault(rule, []).append(plan.parent.name)
    return found


def markdown(docstring: str) -> str:
    """reStructuredText's inline roles and double backticks as Markdown code."""
    text = _ROLE.sub(lambda match: f"`{match.group(1).rsplit('.', 1)[-1]}`", docstring.strip())
    return text.replace("``", "`")
