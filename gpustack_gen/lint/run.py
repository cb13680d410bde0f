"""``gpustack-gen lint``: read YAML files, detect each document's kind, and run the rules on it.

Decisions, also in docs/lint-and-import.md:

- Findings are :class:`~gpustack_gen.errors.Problem` objects with a severity. Errors are things upstream
  rejects, ignores silently, or that break scheduling; warnings are legal settings with a known trap.
- A file that cannot be read (missing, a folder, not UTF-8, not YAML) is reported as an error finding
  at the YAML problem's position and makes the run *unreadable* (exit code 2); the other files are
  still linted.
- A document whose kind is not recognized is a warning ("not linted"), not a failure: a multi-document
  file may well hold other things. Other Kubernetes objects (Deployments, Kustomizations...) and
  gpustack-gen's own reports are skipped without a finding.
- Exit codes (:attr:`LintReport.exit_code`): 0 no errors (warnings allowed), 1 at least one error
  finding, 2 at least one unreadable file.

Pure: returns a report; printing is the caller's business.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import Problem, Severity
from ..versions.gpu_operator import NEWEST_OPERATOR, OperatorVersion
from ..yamlio.input_file import InputFileError, read_input_bytes
from ..yamlio.limits import MAX_IMPORT_INPUT_BYTES
from .detect import LINTED_KINDS, DocumentKind, detect
from .locate import Source
from .reporter import LintOptions, Reporter
from .rules import lint_document

__all__ = [
    "EXIT_CLEAN",
    "EXIT_FINDINGS",
    "EXIT_UNREADABLE",
    "LintOptions",
    "LintReport",
    "LintedDocument",
    "default_options",
    "lint_files",
    "lint_text",
]

EXIT_CLEAN, EXIT_FINDINGS, EXIT_UNREADABLE = 0, 1, 2


@dataclass(frozen=True)
class LintedDocument:
    """One YAML document of a linted file: where it starts and what it was taken for."""

    file: str
    index: int  # 0-based position in the file's document stream
    line: int  # 1-based line of its first key; 0 when unknown
    kind: DocumentKind

    def as_dict(self) -> dict[str, object]:
        return {"file": self.file, "index": self.index, "line": self.line, "kind": self.kind}


@dataclass(frozen=True)
class LintReport:
    """Everything one lint run found, file by file in the order given, each file's findings by position."""

    problems: tuple[Problem, ...]
    documents: tuple[LintedDocument, ...]
    unreadable: tuple[str, ...]
    files: tuple[str, ...]

    @property
    def errors(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity is Severity.ERROR)

    @property
    def warnings(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity is Severity.WARNING)

    @property
    def exit_code(self) -> int:
        if self.unreadable:
            return EXIT_UNREADABLE
        return EXIT_FINDINGS if self.errors else EXIT_CLEAN


def default_options(
    operator: OperatorVersion | None = None, namespace: str = "gpu-operator", kubernetes: str | None = None
) -> LintOptions:
    """Options with the newest known GPU Operator and the newest Kubernetes schema as defaults."""
    if kubernetes is None:
        from ..validate.kubernetes import schema_versions

        major, minor = schema_versions()[-1]
        kubernetes = f"{major}.{minor}"
    return LintOptions(operator=operator or NEWEST_OPERATOR, namespace=namespace, kubernetes=kubernetes)


def _document_line(document: Any) -> int:
    lc = getattr(document, "lc", None)
    return int(lc.line) + 1 if lc is not None and lc.line is not None else 0


# The ids of the findings about a file rather than a document's content (the rules' own are their modules' ID).
INVALID_YAML = "yaml"
UNKNOWN_DOCUMENT = "unknown-document"
NO_DOCUMENTS = "no-documents"
UNREADABLE = "unreadable"


def lint_text(text: str, file: str, options: LintOptions) -> tuple[list[Problem], list[LintedDocument], bool]:
    """Lint the YAML stream ``text`` (named ``file`` in findings): (problems, documents, readable)."""
    from ruamel.yaml.error import YAMLError

    from ..yamlio.load import load_located_all

    reporter = Reporter(file, text.splitlines())
    try:
        documents = load_located_all(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return [Problem(file, line, column, "", f"not valid YAML: {problem}", rule=INVALID_YAML)], [], False
    linted: list[LintedDocument] = []
    for index, document in enumerate(documents):
        if document is None:
            continue
        kind = detect(document)
        source = Source(document, anchor=(_document_line(document), 1))
        linted.append(LintedDocument(file, index, _document_line(document), kind))
        if kind in LINTED_KINDS:
            lint_document(document, kind, source, reporter, options)
        elif kind == "unknown":
            reporter.problems.append(
                Problem(
                    file,
                    _document_line(document),
                    1,
                    "",
                    f"document {index + 1} is not a GPU Operator config lint knows: not linted",
                    "lint reads device-plugin and mig-parted configs (bare or in a ConfigMap), ClusterPolicies, "
                    "GPU Operator values files and workload values fragments",
                    Severity.WARNING,
                    rule=UNKNOWN_DOCUMENT,
                )
            )
    if not linted:
        reporter.problems.append(
            Problem(file, 0, 0, "", "no YAML documents in the file", "", Severity.WARNING, rule=NO_DOCUMENTS)
        )
    return sorted(set(reporter.problems)), linted, True


def _read(path: Path) -> tuple[str | None, str]:
    try:
        return read_input_bytes(path, MAX_IMPORT_INPUT_BYTES).decode("utf-8-sig"), ""
    except InputFileError as exc:
        return None, "no such file" if exc.missing else exc.reason
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 text ({exc.reason} at byte {exc.start})"


def lint_files(paths: Iterable[str | Path], options: LintOptions | None = None) -> LintReport:
    """Lint each file in ``paths`` (each may hold several YAML documents); see the module docstring."""
    options = options or default_options()
    problems: list[Problem] = []
    documents: list[LintedDocument] = []
    unreadable: list[str] = []
    files: list[str] = []
    for raw in paths:
        name = str(raw)
        files.append(name)
        text, reason = _read(Path(raw))
        if text is None:
            problems.append(Problem(name, 0, 0, "", reason, rule=UNREADABLE))
            unreadable.append(name)
            continue
        found, linted, readable = lint_text(text, name, options)
        problems.extend(found)
        documents.extend(linted)
        if not readable:
            unreadable.append(name)
    return LintReport(tuple(problems), tuple(documents), tuple(unreadable), tuple(files))
