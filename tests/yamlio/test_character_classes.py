"""The fast reader's character classes are written as what they match; each is the complement of the ranges
it must allow, checked on every code point."""

from __future__ import annotations

import re

import pytest

from gpustack_gen.yamlio import fast_reader

# What each class lets through, as ranges of code points: ruamel's printable set, and for the fast path that
# set without the tab, NEL, LS, PS and U+FEFF (see the comment on _UNUSUAL_CHARACTER).
ALLOWED = {
    "_RUAMEL_NON_PRINTABLE": [
        *[(0x09, 0x0A), (0x0D, 0x0D), (0x20, 0x7E), (0x85, 0x85), (0xA0, 0xD7FF)],
        *[(0xE000, 0xFFFD), (0x10000, 0x10FFFF)],
    ],
    "_UNUSUAL_CHARACTER": [
        *[(0x0A, 0x0A), (0x0D, 0x0D), (0x20, 0x7E), (0xA0, 0x2027), (0x202A, 0xD7FF)],
        *[(0xE000, 0xFEFE), (0xFF00, 0xFFFD), (0x10000, 0x10FFFF)],
    ],
}


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_a_class_matches_exactly_the_characters_outside_its_allowed_ranges(name: str) -> None:
    pattern: re.Pattern[str] = getattr(fast_reader, name)
    allowed = ALLOWED[name]
    wrong = [
        code
        for code in range(0x110000)
        if bool(pattern.match(chr(code))) == any(low <= code <= high for low, high in allowed)
    ]
    assert wrong == []
    assert pattern.search("a" * 50 + "\x00") is not None  # found past the start too
