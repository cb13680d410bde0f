"""Kubernetes quantities as exact numbers (k8s.io/apimachinery pkg/api/resource/quantity.go suffixes)."""

from __future__ import annotations

import math
import re
from fractions import Fraction

from .names import QUANTITY

MIB = 2**20
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1)}
_DECIMAL.update({suffix: Fraction(10 ** (3 * (i + 1))) for i, suffix in enumerate("kMGTPE")})
_QUANTITY_RE = re.compile(QUANTITY)


def quantity_value(quantity: int | str) -> Fraction:
    """The exact value of a quantity that matches ``names.QUANTITY``: ``"3Gi"`` -> 3221225472, ``"1e3"`` -> 1000."""
    if isinstance(quantity, int):
        return Fraction(quantity)
    match = _QUANTITY_RE.fullmatch(quantity)
    assert match is not None, f"not a quantity: {quantity!r}"  # the intent's Quantity type checked it
    number, suffix = match.group(1), match.group(3) or ""
    value = Fraction(number)
    if suffix[:1] in ("e", "E") and suffix[1:] not in ("", "i"):  # an exponent; "E" is exa, "Ei" exbi
        return value * Fraction(10) ** int(suffix[1:])
    return value * (_BINARY[suffix] if suffix in _BINARY else _DECIMAL[suffix])


def quantity_mib(quantity: int | str) -> int:
    """A byte quantity in whole MiB, rounded up: ``"3Gi"`` -> 3072, ``"3G"`` -> 2862."""
    return math.ceil(quantity_value(quantity) / MIB)
