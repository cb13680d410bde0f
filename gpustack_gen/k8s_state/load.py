"""Text as ``kubectl get -o json|yaml`` (or Helm) writes it, parsed into documents that remember their lines.

JSON, which is what ``kubectl get -o json`` and the API server write, is parsed by :mod:`json` (a cluster's
pod list runs to megabytes, which the located YAML reader takes minutes over); the line of a list item is
then looked up only when a message needs it. Anything else is YAML, read with positions. Errors are
:class:`~gpustack_gen.errors.Problem` objects located in the input, collected rather than raised.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import Problem
from ..yamlio.input_file import InputFileError, read_input_bytes
from ..yamlio.limits import MAX_IMPORT_INPUT_BYTES, MAX_JSON_INPUT_BYTES, value_error_reason
from ..yamlio.load import to_plain


@dataclass(frozen=True)
class InputText:
    """An input given as text rather than as a file (``name`` is how messages refer to it)."""

    name: str
    text: str


InputSource = Path | InputText


@dataclass(frozen=True)
class Where:
    """Where a document or list item starts."""

    file: str
    line: int  # 1-based; 0 when unknown

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(frozen=True)
class Document:
    """One parsed document: plain data, its 1-based line, and the line of each ``items`` entry (0: unknown)."""

    data: Any
    line: int
    item_lines: tuple[int, ...] = ()

    def item_line(self, index: int) -> int:
        if index < len(self.item_lines) and self.item_lines[index]:
            return self.item_lines[index]
        return self.line


def load_documents(source: InputSource, problems: list[Problem]) -> tuple[str, list[Document]]:
    """How messages name the input, and its documents; unreadable input adds a problem and gives none."""
    if isinstance(source, InputText):
        return source.name, parse_documents(source.name, source.text, problems)
    label = source.as_posix() if not source.is_absolute() else source.name
    try:
        raw = read_input_bytes(source, MAX_JSON_INPUT_BYTES)
    except InputFileError as exc:
        problems.append(Problem(label, 0, 0, "", exc.reason))
        return label, []
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        problems.append(
            Problem(label, line, 0, "", "not valid UTF-8", "kubectl and helm write UTF-8; save it as UTF-8")
        )
        return label, []
    return label, parse_documents(label, text, problems)


def parse_documents(label: str, text: str, problems: list[Problem]) -> list[Document]:
    """The documents of ``text``: one JSON document, or a YAML stream."""
    stripped = text.lstrip()
    json_error: json.JSONDecodeError | None = None
    if stripped.startswith(("{", "[")):
        if len(text) > MAX_JSON_INPUT_BYTES:
            problems.append(Problem(label, 0, 0, "", f"input is larger than {MAX_JSON_INPUT_BYTES:,} bytes"))
            return []
        try:
            data = json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_object_without_duplicates)
        except json.JSONDecodeError as exc:
            json_error = exc  # perhaps a YAML stream of JSON documents; YAML decides below
        except RecursionError:
            problems.append(Problem(label, 0, 0, "", "invalid JSON: nested too deeply"))
            return []
        except ValueError as exc:  # ours below, or an integer of more than 4300 digits (int() refuses those)
            problems.append(Problem(label, 0, 0, "", f"invalid JSON: {value_error_reason(exc)}", _REWRITE))
            return []
        else:
            line = text.count("\n", 0, len(text) - len(stripped)) + 1
            return [Document(data, line, _json_item_lines(text) if isinstance(data, dict) else ())]
    return _parse_yaml(label, text, problems, json_error)


def _parse_yaml(
    label: str, text: str, problems: list[Problem], json_error: json.JSONDecodeError | None
) -> list[Document]:
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    from ..yamlio.load import load_located_all

    if len(text) > MAX_IMPORT_INPUT_BYTES:
        problems.append(Problem(label, 0, 0, "", f"input is larger than {MAX_IMPORT_INPUT_BYTES:,} bytes"))
        return []
    try:
        # kubectl never writes duplicate keys; the last one wins, as in Kubernetes.
        raw_docs = load_located_all(text, allow_duplicate_keys=True)
    except MarkedYAMLError as exc:
        if json_error is not None:
            problems.append(_json_problem(label, json_error))
            return []
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        message = " ".join(str(exc.problem or exc).split())
        problems.append(Problem(label, line, column, "", f"invalid YAML: {message}"))
        return []
    except (YAMLError, RecursionError, ValueError) as exc:
        if json_error is not None:
            problems.append(_json_problem(label, json_error))
            return []
        reason = value_error_reason(exc) if isinstance(exc, ValueError) else " ".join(str(exc).split())
        problems.append(Problem(label, 0, 0, "", f"invalid YAML: {reason}"))
        return []
    return [Document(to_plain(doc), _line(doc), _item_lines(doc)) for doc in raw_docs if doc is not None]


_REWRITE = "write the file again with kubectl get ... -o json > FILE; it holds one JSON document"


def _refuse_constant(name: str) -> Any:
    """NaN, Infinity and -Infinity: Python's json takes them, JSON (and the API server) does not."""
    raise ValueError(f"{name} is not a JSON number")


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refused when a key repeats: which one wins differs between readers, so a finding could lie."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"the key {key!r} appears twice in one object")
        found[key] = value
    return found


def _json_problem(label: str, error: json.JSONDecodeError) -> Problem:
    return Problem(
        label,
        error.lineno,
        error.colno,
        "",
        f"invalid JSON: {error.msg}",
        _REWRITE,
    )


def _line(node: Any) -> int:
    lc = getattr(node, "lc", None)
    line = getattr(lc, "line", None)
    return line + 1 if isinstance(line, int) else 0


def _item_lines(doc: Any) -> tuple[int, ...]:
    items = doc.get("items") if isinstance(doc, Mapping) else None
    lc = getattr(items, "lc", None)
    if not isinstance(items, list) or lc is None:
        return ()
    lines = []
    for index in range(len(items)):
        try:
            lines.append(int(lc.item(index)[0]) + 1)
        except (KeyError, IndexError, TypeError):
            lines.append(0)
    return tuple(lines)


def _json_item_lines(text: str) -> tuple[int, ...]:
    """The line where each entry of ``items`` of the JSON object ``text`` starts; () when it cannot tell.

    Walks the top-level object key by key with the :mod:`json` scanner, so strings and nesting never mislead
    it; this costs about one more parse of the text.
    """
    decoder = json.JSONDecoder()
    whitespace = " \t\r\n"

    def skip(position: int) -> int:
        while position < len(text) and text[position] in whitespace:
            position += 1
        return position

    try:
        position = skip(0)
        if text[position] != "{":
            return ()
        position = skip(position + 1)
        while text[position] == '"':
            key, position = json.decoder.scanstring(text, position + 1)  # type: ignore[attr-defined]
            position = skip(skip(position) + 1)  # past the colon
            if key == "items" and text[position] == "[":
                return _array_lines(text, skip(position + 1), decoder, skip)
            _, position = decoder.raw_decode(text, position)
            position = skip(position)
            if text[position] != ",":
                return ()
            position = skip(position + 1)
    except (IndexError, ValueError):
        return ()
    return ()


def _array_lines(text: str, position: int, decoder: json.JSONDecoder, skip: Callable[[int], int]) -> tuple[int, ...]:
    lines: list[int] = []
    counted, line = 0, 1
    while text[position] != "]":
        line += text.count("\n", counted, position)
        counted = position
        lines.append(line)
        _, position = decoder.raw_decode(text, position)
        position = skip(position)
        if text[position] == ",":
            position = skip(position + 1)
    return tuple(lines)
