""" "Did you mean": the valid choices closest to what was written, found one way everywhere.

Case is ignored (``Tesla-t4`` finds ``tesla-t4`` first), then difflib ranks the rest by similarity with one
cutoff, difflib's own default of 0.6: a swapped or missing letter is found (``nodepols`` -> ``nodePools``),
unrelated names are not offered, and a two-letter name one letter off (``t5`` for ``t4``, ratio 0.5) is
left to the hint that lists the choices.
"""

from __future__ import annotations

from collections.abc import Iterable

CUTOFF = 0.6


def suggest(word: str, choices: Iterable[str], n: int = 1) -> list[str]:
    """Up to ``n`` of ``choices`` that ``word`` most likely meant, best first, spelled as in ``choices``."""
    by_lower: dict[str, str] = {}
    for choice in choices:
        by_lower.setdefault(choice.lower(), choice)
    wanted = word.lower()
    if wanted in by_lower:
        return [by_lower[wanted]]
    import difflib  # only for a name that is not there: a valid fleet never loads it

    return [by_lower[match] for match in difflib.get_close_matches(wanted, list(by_lower), n=n, cutoff=CUTOFF)]


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The one choice ``word`` most likely meant, or None."""
    found = suggest(word, choices)
    return found[0] if found else None


def similarity(a: str, b: str) -> float:
    """How alike two names are, 0 to 1, ignoring case (difflib's ratio, as :func:`suggest` ranks them)."""
    import difflib

    return difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()
