"""The lint rules page (``docs/reference/lint-rules.md``), generated from the rule modules' docstrings."""

from __future__ import annotations

from docsgen.changes import markdown
from gpustack_gen.lint.rules import RULES

INTRO = """# Lint rules

<!-- Generated from gpustack_gen/lint/rules/: run the tests with UPDATE_GOLDEN=1 to regenerate. -->

Each lint rule is one module of `gpustack_gen/lint/rules/`, and this page is their docstrings. Every
finding names the rule that found it: `rule` in `--format json`, `[rule]` in the title of a `--format
github` annotation. A rule that finds a config inside another (a ConfigMap's data, Helm's `config.data`)
hands it to that config's rule. How lint reads files and its exit codes: [Lint and
import](../lint-and-import.md#linting-hand-written-configs).
"""


def render_lint_rules() -> str:
    sections = [INTRO]
    for rule in RULES:
        module = str(getattr(rule, "__name__"))  # noqa: B009 - the protocol does not declare it
        kinds = ", ".join(f"`{kind}`" for kind in rule.KINDS)
        source = module.replace(".", "/") + ".py"
        doc = markdown(__import__(module, fromlist=["_"]).__doc__ or "")
        sections.append(f"## {rule.ID}\n\n**Documents:** {kinds} · **Rule module:** `{source}`\n\n{doc}\n")
    return "\n".join(sections)
