"""``gpustack-gen lint``: strict checks for hand-written GPU Operator configs, with file:line:col findings.

:func:`lint_files` detects what each YAML document is (:func:`detect`) and runs the rules for it;
:func:`format_report` renders the :class:`LintReport` as text, JSON or GitHub annotations.
"""

from .detect import DocumentKind, detect
from .report import LINT_REPORTS, format_report
from .reporter import LintOptions
from .run import LintedDocument, LintReport, default_options, lint_files, lint_text

__all__ = [
    "LINT_REPORTS",
    "DocumentKind",
    "LintOptions",
    "LintReport",
    "LintedDocument",
    "default_options",
    "detect",
    "format_report",
    "lint_files",
    "lint_text",
]
