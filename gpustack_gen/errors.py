"""Located problems and the exceptions that carry them.

Every user-facing failure is a :class:`Problem`: where it is (file, line, column, field path), what is
wrong, and a hint. The library raises :class:`FleetError` with all problems found; the CLI prints them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum


class ExitCode(IntEnum):
    """The exit codes of every command; results that decide one expose ``exit_code``."""

    OK = 0
    DIFFERS = 1  # differences or findings (render --check, diff --exit-code, plan with errors, lint errors)
    INVALID = 2  # invalid input, usage or output error
    INTERNAL = 3  # a bug
    IN_PROGRESS = 4  # verify: nothing differs but nodes mid-rollout (MIG repartitioning, a driver upgrade, cordoned)


# Problems reported of one input at most, and printed at most: a hostile file of millions of bad items must not
# print millions of lines (the rest are counted: "... and N more").
MAX_PROBLEMS = 100


def shown_problems(problems: Sequence[Problem]) -> tuple[Sequence[Problem], str | None]:
    """The problems to print of ``problems``, and the line that counts the rest (None: all are shown)."""
    if len(problems) <= MAX_PROBLEMS + 1:  # "... and 1 more" would take the line the problem takes
        return problems, None
    return problems[:MAX_PROBLEMS], more_problems(len(problems) - MAX_PROBLEMS)


def more_problems(count: int) -> str:
    return f"... and {count:,} more problem{'s' if count != 1 else ''}"


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, order=True)
class Problem:
    """One finding, sortable by position so that reports read top to bottom."""

    file: str
    line: int  # 1-based; 0 when unknown
    column: int  # 1-based; 0 when unknown
    path: str  # dotted field path such as ``clusters[0].nodePools[1].sharing``; "" for the whole file
    message: str
    hint: str = ""
    severity: Severity = field(default=Severity.ERROR, compare=False)
    rule: str = field(default="", compare=False)  # the lint rule that found it; "" elsewhere

    def format(self) -> str:
        """``file:line:col: path: message (hint)``: the form editors and CI annotations understand."""
        where = self.file
        if self.line:
            where += f":{self.line}:{self.column}"
        text = f"{where}: "
        if self.severity is Severity.WARNING:
            text += "warning: "
        if self.path:
            text += f"{self.path}: "
        text += self.message
        if self.hint:
            text += f" (hint: {self.hint})"
        return text

    def as_dict(self) -> dict[str, object]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "path": self.path,
            "severity": self.severity.value,
            "message": self.message,
            "hint": self.hint,
        }


def value_kind(value: object) -> str:
    """How a message names the kind of a value: "a boolean", "an integer", "a list", "null"..."""
    import datetime
    from collections.abc import Mapping

    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, datetime.date):
        return "a date"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, Sequence):
        return "a list"
    return f"a {type(value).__name__}"


class GpustackError(Exception):
    """Base class of every error the library raises on purpose."""


class FleetError(GpustackError):
    """The fleet intent is invalid; carries every problem found (errors first, in file order)."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        ordered = sorted(problems)
        self.problems: tuple[Problem, ...] = tuple(
            [p for p in ordered if p.severity is Severity.ERROR]
            + [p for p in ordered if p.severity is not Severity.ERROR]
        )
        errors = [p for p in self.problems if p.severity is Severity.ERROR]
        first = errors[0].format() if errors else "invalid fleet"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(first + more)

    @property
    def errors(self) -> Sequence[Problem]:
        return [p for p in self.problems if p.severity is Severity.ERROR]


class InputError(GpustackError):
    """An input, kubeconfig or API server that cannot be used (exit 2): the message is one line naming it."""


class UsageError(GpustackError):
    """The command was given the wrong way (exit 2, with the command's usage)."""


class OutputError(InputError):
    """Writing the rendered bundle failed (read-only target, disk full, lock held, unsafe path)."""


class InternalError(GpustackError):
    """A generated artifact failed its own schema: a bug in gpustack-gen, never the user's input."""

    def __init__(self, artifact: str, path: str, message: str) -> None:
        self.artifact = artifact
        self.path = path
        super().__init__(f"{artifact}: {path or '<document>'}: {message}")
