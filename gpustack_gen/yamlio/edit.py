"""Edit a YAML file in place: ruamel's round trip, trusted only where it gives back the file's own bytes.

ruamel keeps comments and quoting but writes indentation its own way: :func:`load_for_edit` tries the two
layouts files are written in (``- `` under its key, or indented by two) and returns the document only
when dumping it unchanged reproduces the text exactly, so that an edit changes nothing but what it adds.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["EditableDocument", "flow_mapping", "load_for_edit"]

# (mapping, sequence, offset) indents of the layouts tried, in order.
_INDENTS = ((2, 4, 2), (2, 2, 0))


@dataclass(frozen=True)
class EditableDocument:
    """A round-trip document (ruamel's commented containers) and the dumper that writes it back."""

    root: Any
    _yaml: Any

    def dump(self) -> str:
        stream = io.StringIO()
        self._yaml.dump(self.root, stream)
        return stream.getvalue()


def load_for_edit(text: str) -> EditableDocument | None:
    """``text`` as an editable document, or None when no layout writes it back byte for byte.

    Raises ruamel's ``YAMLError`` when ``text`` is not YAML.
    """
    from ruamel.yaml import YAML

    for mapping, sequence, offset in _INDENTS:
        yaml = YAML(typ="rt", pure=True)
        yaml.preserve_quotes = True
        yaml.width = 1 << 16  # never fold a long line the file has
        yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
        document = EditableDocument(yaml.load(text), yaml)
        if document.dump() == text:
            return EditableDocument(yaml.load(text), yaml)  # a fresh copy: dumping may annotate the first
    return None


def flow_mapping(value: Mapping[str, Any]) -> Any:
    """A mapping written on one line, ``{key: value, ...}``."""
    from ruamel.yaml.comments import CommentedMap

    mapping = CommentedMap(value)
    mapping.fa.set_flow_style()
    return mapping
