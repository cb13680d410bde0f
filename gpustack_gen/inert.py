"""Text from any input made inert before it reaches a terminal, a comment or a file: the one place that does it.

A node name, a label, a container's waiting reason or a fleet's free-text field (``helm.chart``) can hold control
characters: ``ESC ] 52`` writes the clipboard, ``ESC [ 2K`` and CR erase what was printed, BEL rings, and the bidi
overrides (U+202E) show text in another order than a shell reads it. click strips only CSI sequences, and only
when the stream is not a terminal (pallets/click 8.4.0 ``src/click/_compat.py:16,488-509``); kubectl's own fix
(CVE-2021-25743) replaces only ESC and CR. Here every character that is not printable (``str.isprintable``: C0 and C1 controls, DEL, the line and paragraph
separators, the bidi and other format controls, lone surrogates, unassigned code points) is written as an escape;
multi-line text keeps its newlines and tabs.
"""

from __future__ import annotations

import re

__all__ = ["escape_char", "inert_json", "inert_line", "inert_text"]

# The styles gpustack-gen's own coloured text reports use (click.style with fg red/green/yellow, bold or dim, on or
# off: ``bold=False`` is 22, normal intensity): kept when colour is on, so that input can at most colour itself,
# never move the cursor, erase or write elsewhere.
_OWN_STYLE = re.compile(r"\x1b\[(?:0|1|2|22|3[0-7]|9[0-7])m")


def escape_char(char: str) -> str:
    """``\\x1b``, ``\\u202e``: how one unsafe character is written; a byte that was not UTF-8 shows as that byte."""
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # kept by surrogateescape: the undecodable byte itself
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def inert_line(text: str) -> str:
    """``text`` with every character that is not printable (``str.isprintable``) escaped, newlines and tabs too."""
    if text.isprintable():  # nearly always
        return text
    return "".join(c if c.isprintable() else escape_char(c) for c in text)


def inert_text(text: str, *, keep_styles: bool = False) -> str:
    """As :func:`inert_line`, but newlines and tabs stay, and so (``keep_styles``) do our own colours."""
    if keep_styles:
        parts = _OWN_STYLE.split(text)
        styles = [*_OWN_STYLE.findall(text), ""]
        return "".join(inert_text(part) + style for part, style in zip(parts, styles, strict=True))
    if text.replace("\n", "").replace("\t", "").isprintable():
        return text
    return "".join(c if c.isprintable() or c in "\n\t" else escape_char(c) for c in text)


def inert_json(text: str) -> str:
    """JSON text with the characters ``json.dumps(ensure_ascii=False)`` leaves raw and not printable as ``\\uXXXX``.

    JSON already escapes C0 controls; the others (DEL, C1, separators, bidi controls) can only stand inside
    strings, where ``\\uXXXX`` (a surrogate pair above U+FFFF) means the same character.
    """
    if text.replace("\n", "").isprintable():
        return text
    return "".join(c if c.isprintable() or c == "\n" else _json_escape(c) for c in text)


def _json_escape(char: str) -> str:
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
