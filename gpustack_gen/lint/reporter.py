"""What lint rules report through: the options they check against, and a :class:`Reporter` that turns a field
path into ``file:line:col`` and stamps each finding with the id of the rule that found it.

Also the small readers the rules share: values at a path, and YAML embedded in a string (a ConfigMap's data).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..errors import Problem, Severity
from ..validate.findings import SchemaFinding, format_path
from ..versions.gpu_operator import OperatorVersion
from .locate import Source, embedded_source, join_path, locate, parse_path

ERROR, WARNING = Severity.ERROR, Severity.WARNING


@dataclass(frozen=True)
class LintOptions:
    """What to lint against: the GPU Operator release, its namespace, and the Kubernetes version."""

    operator: OperatorVersion
    namespace: str = "gpu-operator"
    kubernetes: str = "1.37"


@dataclass
class Reporter:
    """Collects the located problems of one file, each carrying the id of the rule that is running."""

    file: str
    lines: list[str]
    problems: list[Problem] = field(default_factory=list)
    rule: str = ""

    @contextmanager
    def running(self, rule: str) -> Iterator[None]:
        """Findings reported inside are ``rule``'s (a rule checking embedded config hands it to that config's rule)."""
        outer, self.rule = self.rule, rule
        try:
            yield
        finally:
            self.rule = outer

    def add(
        self,
        source: Source,
        prefix: str,
        path: str,
        message: str,
        hint: str = "",
        severity: Severity = ERROR,
    ) -> None:
        line, column = locate(source, parse_path(path))
        self.add_at(line, column, join_path(prefix, path), message, hint, severity)

    def add_at(
        self, line: int, column: int, path: str, message: str, hint: str = "", severity: Severity = ERROR
    ) -> None:
        self.problems.append(Problem(self.file, line, column, path, message, hint, severity, rule=self.rule))

    def add_findings(
        self, source: Source, prefix: str, findings: Iterable[SchemaFinding], severity: Severity = ERROR
    ) -> None:
        for finding in findings:
            self.add(source, prefix, finding.path, finding.message, finding.hint, severity)


def value_at(data: object, path: str) -> object:
    for part in parse_path(path):
        in_mapping = isinstance(data, Mapping) and part in data
        in_list = isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data)
        if not (in_mapping or in_list):
            return None
        data = data[part]  # type: ignore[index]
    return data


def get(data: object, *keys: str) -> object:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def mapping(value: object) -> Mapping[Any, Any]:
    return value if isinstance(value, Mapping) else {}


def parse_embedded(parent: Any, key: Any, reporter: Reporter, source: Source, prefix: str) -> tuple[Any, Source] | None:
    """Parse the YAML text ``parent[key]``; report and return None when it is not a YAML mapping."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    from ..yamlio.load import load_located

    value = parent[key]
    path = join_path(prefix, format_path([key]))
    if isinstance(value, Mapping):
        return value, embedded_source(parent, key, value, reporter.lines)
    if not isinstance(value, str):
        return None  # the ConfigMap schema already says it must be a string
    try:
        parsed = load_located(value)
    except YAMLError as exc:
        where = embedded_source(parent, key, None, reporter.lines)
        mark = getattr(exc, "problem_mark", None) if isinstance(exc, MarkedYAMLError) else None
        line, column = where.anchor
        if mark is not None and where.exact:
            line, column = mark.line + where.line_offset + 1, mark.column + where.col_offset + 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        reporter.add_at(line, column, path, f"not valid YAML: {problem}", "fix the embedded YAML text")
        return None
    if not isinstance(parsed, Mapping):
        # ``prefix`` names ``parent``, whose ruamel node knows its own (absolute) position.
        reporter.add(
            Source(parent, anchor=source.anchor),
            prefix,
            format_path([key]),
            "expected a YAML mapping (a config file) in this value",
        )
        return None
    return parsed, embedded_source(parent, key, parsed, reporter.lines)
