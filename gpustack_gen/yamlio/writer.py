"""Deterministic YAML serialization of plain data (and of YAML embedded in ConfigMap strings).

ruamel.yaml's round-trip emitter, configured in :func:`_dumper`, is the reference: it decides how every
document is written. It is also slow (a representer, a serializer and an event-driven emitter per
document), and nearly everything gpustack-gen writes is the same simple shape: block mappings with
string keys, block sequences, and short ASCII scalars. :func:`fast_dump_yaml` writes that shape
directly, making the same decisions ruamel makes (the quoting rules of ``represent_str`` and ruamel's
own choice between plain, single- and double-quoted scalars), and gives up on anything else: then
:func:`dump_yaml` uses ruamel for the whole document. Tests hold the two to the same bytes.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "EmbeddedYaml",
    "dump_commented",
    "dump_yaml",
    "dump_yaml_reference",
    "fast_dump_yaml",
    "needs_escapes",
    "reads_as_string",
]

_STR_TAG = "tag:yaml.org,2002:str"


@dataclass(frozen=True)
class EmbeddedYaml:
    """A YAML file stored as a string inside another document (a ConfigMap ``data`` value).

    Compilers keep it as data so that validation sees the structure; the writer serializes it.
    """

    data: dict[str, Any]


# Characters YAML 1.1 readers treat as line breaks (or a byte-order mark), which a literal block or a
# plain/single-quoted scalar cannot carry reliably: only double quotes with escapes round-trip them.
# All of them are also non-printable for str.isprintable, which needs_escapes relies on.
_ODD_CHARACTERS = frozenset("\r\x85\u2028\u2029\ufeff")


def needs_escapes(text: str) -> bool:
    """Whether ``text`` holds a character that only a double-quoted scalar writes back faithfully.

    Those are the non-printable characters other than ``\\n`` (``\\r``, ``\\x85``, ``\\u2028``,
    ``\\u2029`` and ``\\ufeff`` among them: none is printable).
    """
    return not text.replace("\n", "").isprintable()


@functools.cache
def _resolvers() -> tuple[Any, ...]:
    from ruamel.yaml.resolver import VersionedResolver

    # Kubernetes tools read YAML 1.1 (sigs.k8s.io/yaml, Helm: `on`, `yes`, `1:30` are not strings
    # there) and others read YAML 1.2 (`0o17`): a string is plain only when both read it as a string.
    return VersionedResolver(version=(1, 1)), VersionedResolver(version=(1, 2))


@functools.lru_cache(maxsize=1 << 16)
def reads_as_string(text: str) -> bool:
    """Whether ``text`` written as a plain scalar reads back as a string under YAML 1.1 and 1.2."""
    from ruamel.yaml.nodes import ScalarNode

    return all(r.resolve(ScalarNode, text, (True, False)) == _STR_TAG for r in _resolvers())


@functools.cache
def _dumper() -> Any:
    from ruamel.yaml import YAML
    from ruamel.yaml.representer import RoundTripRepresenter

    class Representer(RoundTripRepresenter):
        pass

    def represent_str(representer: Any, data: str) -> Any:
        if needs_escapes(data):
            return representer.represent_scalar(_STR_TAG, data, style='"')
        if "\n" in data:
            return representer.represent_scalar(_STR_TAG, data, style="|")
        # Strings that would read back as another type ("1", "true", "1.29", "on") are double-quoted,
        # as Kubernetes documentation writes them.
        if not reads_as_string(data):
            return representer.represent_scalar(_STR_TAG, data, style='"')
        return representer.represent_scalar(_STR_TAG, data)

    def represent_none(representer: Any, data: None) -> Any:
        # Spelled out: an empty value reads as "forgotten", and a merge patch deletes with null.
        return representer.represent_scalar("tag:yaml.org,2002:null", "null")

    Representer.add_representer(str, represent_str)
    Representer.add_representer(type(None), represent_none)
    yaml = YAML(typ="rt")
    yaml.Representer = Representer
    yaml.default_flow_style = False
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=2, offset=0)
    return yaml


def dump_yaml(data: Any) -> str:
    """``data`` as a block-style YAML document: the fast writer when it can, else ruamel.yaml."""
    text = fast_dump_yaml(data)
    return text if text is not None else dump_yaml_reference(data)


def dump_yaml_reference(data: Any) -> str:
    """``data`` written by ruamel.yaml alone (embedded files too): the bytes :func:`dump_yaml` must match."""
    stream = io.StringIO()
    _dumper().dump(_embed(data, dump_yaml_reference), stream)
    return stream.getvalue()


def dump_commented(document: Any) -> str:
    """A document of ruamel's commented containers, comments kept: a file written for people (``import``).

    Sequence items are indented under their key (``- `` two columns in), unlike :func:`dump_yaml`'s output.
    """
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    stream = io.StringIO()
    yaml.dump(document, stream)
    return stream.getvalue()


def _embed(data: Any, dump: Callable[[Any], str]) -> Any:
    """Serialize embedded YAML files first: the dumper is not reentrant."""
    if isinstance(data, EmbeddedYaml):
        return dump(data.data)
    if isinstance(data, dict):
        return {key: _embed(value, dump) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [_embed(item, dump) for item in data]
    return data


# --- the fast writer ------------------------------------------------------------------------------------
#
# What ruamel does with the configuration above, for the shapes written here:
# - a non-empty dict: ``key: value`` lines, nested mappings indented by 2; a non-empty list under a key
#   at the key's own indentation (``- item``, offset 0); a collection as a list item starts on the dash
#   line (``- key: value``, ``- - item``), its content indented by 2;
# - an empty dict or list: ``{}`` / ``[]`` (flow style);
# - True/False/None/int: ``true``/``false``/``null``/``str(n)``;
# - a str: see _scalar and _literal. Anything else (floats, other types, non-string keys, empty
#   documents, long scalars, deep nesting, non-ASCII or control characters): ruamel decides.

# ruamel writes a key as ``? key`` when it is 128 characters or more, counting the tag's length
# (``!!str``) as well: stay well below.
_MAX_KEY = 100
# Scalars are folded when a line passes ruamel's width (4096): keep every line far below that.
_MAX_SCALAR = 1024
_MAX_INDENT = 2048
_DASH_INDICATORS = frozenset("?:-")
_LEADING_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")


class _NotPlain(Exception):
    """The fast writer is not sure how ruamel would write this: let ruamel write the document."""


def fast_dump_yaml(data: Any) -> str | None:
    """``data`` as :func:`dump_yaml_reference` writes it, or None when the fast writer is not sure how."""
    out: list[str] = []
    try:
        if isinstance(data, dict) and data:
            _mapping(data, 0, out)
        elif isinstance(data, list | tuple) and data:
            _sequence(data, 0, out)
        else:
            return None
    except _NotPlain:
        return None
    return "".join(out)


def _plain_allowed(text: str) -> bool:
    """ruamel's ``analyze_scalar(...).allow_block_plain`` for non-empty printable ASCII on one line."""
    first = text[0]
    if first == " " or text[-1] == " " or text.startswith(("---", "...")) or first in _LEADING_INDICATORS:
        return False
    if first in _DASH_INDICATORS and (len(text) == 1 or text[1] == " "):
        return False
    return not (": " in text or text.endswith(":") or " #" in text)


def _double_quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@functools.lru_cache(maxsize=1 << 16)
def _scalar(text: str) -> str | None:
    """How ruamel writes the one-line string ``text`` (as a value or a short key); None: not sure."""
    if not text or len(text) > _MAX_SCALAR or not (text.isascii() and text.isprintable()):
        return None  # empty, long, multi-line, control or non-ASCII characters
    if not reads_as_string(text):
        return _double_quoted(text)  # represent_str's rule
    if _plain_allowed(text):
        return text
    # ruamel's choose_scalar_style: double quotes when the text holds a single quote, else single quotes.
    return _double_quoted(text) if "'" in text else f"'{text}'"


def _literal(text: str, indent: int) -> str:
    """A multi-line string as ruamel's literal block (``|`` or ``|-``), from the indicator on."""
    if (
        text[0] in " \n"  # needs an indentation indicator
        or text.endswith("\n\n")  # keep chomping (``|+``)
        or not (text.isascii() and text.replace("\n", "").isprintable())
    ):
        raise _NotPlain
    pad = " " * indent
    if text.endswith("\n"):
        lines, hint = text[:-1].split("\n"), "|\n"
    else:
        lines, hint = text.split("\n"), "|-\n"
    return hint + "".join(pad + line + "\n" if line else "\n" for line in lines)


def _other(value: object) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if type(value) is int:
        return str(value)
    raise _NotPlain


def _string(value: str, indent: int) -> str:
    """A string value and its line end: a literal block when it has newlines, else a (quoted) scalar."""
    if "\n" in value:
        return _literal(value, indent)
    written = _scalar(value)
    if written is None:
        raise _NotPlain
    return written + "\n"


def _mapping(data: dict[Any, Any], indent: int, out: list[str]) -> None:
    if indent > _MAX_INDENT:
        raise _NotPlain
    pad = " " * indent
    for key, value in data.items():
        if type(key) is not str or len(key) > _MAX_KEY:
            raise _NotPlain
        written_key = _scalar(key)
        if written_key is None:
            raise _NotPlain
        if isinstance(value, EmbeddedYaml):
            value = dump_yaml(value.data)
        if type(value) is str:
            out.append(f"{pad}{written_key}: {_string(value, indent + 2)}")
        elif isinstance(value, dict):
            if value:
                out.append(f"{pad}{written_key}:\n")
                _mapping(value, indent + 2, out)
            else:
                out.append(f"{pad}{written_key}: {{}}\n")
        elif isinstance(value, list | tuple):
            if value:
                out.append(f"{pad}{written_key}:\n")
                _sequence(value, indent, out)
            else:
                out.append(f"{pad}{written_key}: []\n")
        else:
            out.append(f"{pad}{written_key}: {_other(value)}\n")


def _sequence(items: list[Any] | tuple[Any, ...], indent: int, out: list[str]) -> None:
    """Items at the key's indentation (offset 0); a collection item starts on its dash line."""
    if indent > _MAX_INDENT:
        raise _NotPlain
    pad = " " * indent
    for item in items:
        if isinstance(item, EmbeddedYaml):
            item = dump_yaml(item.data)
        if type(item) is str:
            out.append(f"{pad}- {_string(item, indent + 2)}")
        elif isinstance(item, dict | list | tuple):
            if not item:
                out.append(f"{pad}- {{}}\n" if isinstance(item, dict) else f"{pad}- []\n")
                continue
            first = len(out)
            if isinstance(item, dict):
                _mapping(item, indent + 2, out)
            else:
                _sequence(item, indent + 2, out)
            out[first] = pad + "- " + out[first][indent + 2 :]
        else:
            out.append(f"{pad}- {_other(item)}\n")
