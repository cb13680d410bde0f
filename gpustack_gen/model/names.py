"""Kubernetes name, label and quantity syntax, with messages that say what is wrong with a value."""

from __future__ import annotations

import re
import unicodedata

DNS1123_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
# A ConfigMap data key (k8s.io/apimachinery IsConfigMapKey): at most 253 of these characters.
CONFIGMAP_KEY = r"^[-._a-zA-Z0-9]{1,253}$"
DNS1123_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
LABEL_NAME = r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$"
LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
# The Kubernetes quantity grammar (resource.MustParse): a signed decimal and an optional suffix.
QUANTITY = r"^[+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+|[KMGTPE]i|[numkKMGTPE])?$"
# Bounds gpustack-gen puts on a quantity beyond the grammar, far above any GPU, memory or CPU size: past them the
# exact arithmetic (10 ** exponent) and str() of the value (at most 4300 digits) would cost without limit.
MAX_QUANTITY_LENGTH = 64
MAX_QUANTITY_EXPONENT = 100
# major.minor.patch, as the "1.29.15" of the hints; resolve.py checks it and the JSON schema carries it.
KUBERNETES_VERSION = r"^1\.[0-9]{1,3}\.[0-9]{1,4}$"
# An NVIDIA driver version as the driver images are tagged: "580.82.07", "535.247.01", "550.54".
DRIVER_VERSION = r"^[0-9]+\.[0-9]+(\.[0-9]+)?$"

_LABEL_RE = re.compile(DNS1123_LABEL)
_SUBDOMAIN_RE = re.compile(DNS1123_SUBDOMAIN)
_LABEL_NAME_RE = re.compile(LABEL_NAME)
_LABEL_VALUE_RE = re.compile(LABEL_VALUE)


DNS_LABEL_RULE = "lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters"


def explain_dns_label(value: str) -> str | None:
    """None when ``value`` is a DNS-1123 label, else why not (the most specific reason first)."""
    if _LABEL_RE.fullmatch(value) and len(value) <= 63:
        return None
    return f"{value!r} is not a valid name: {_name_flaw(value, 63)}"


def dns_label_hint(value: str) -> str:
    """What a name may hold, with a corrected spelling of ``value`` when one is obvious."""
    suggestion = suggest_dns_label(value)
    return f"use {DNS_LABEL_RULE}" + (f", e.g. {suggestion!r}" if suggestion and suggestion != value else "")


def suggest_dns_label(value: str) -> str:
    """``value`` folded into a DNS-1123 label: look-alike letters to ASCII, lowercase, other runs to '-'."""
    chars = []
    for char in value:
        if ord(char) > 127:
            char = _ascii_look_alike(char) or "-"
        chars.append(char.lower())
    folded = re.sub(r"[^a-z0-9]+", "-", "".join(chars)).strip("-")
    return folded[:63].rstrip("-")


def _ascii_look_alike(char: str) -> str:
    """The Latin letter a Cyrillic or Greek letter is named after (U+0430 CYRILLIC SMALL LETTER A -> 'a'), else ''."""
    folded = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode()
    if folded:
        return folded
    name = unicodedata.name(char, "")
    if name.startswith(("CYRILLIC", "GREEK")) and " LETTER " in name:
        letter = name.rsplit(" ", 1)[-1]
        latin = {"ALPHA": "a", "BETA": "b", "EPSILON": "e", "IOTA": "i", "KAPPA": "k", "OMICRON": "o", "TAU": "t"}
        found = letter if len(letter) == 1 else latin.get(letter, "")
        return found.lower() if " SMALL " in name else found.upper()
    return ""


def _name_flaw(value: str, limit: int) -> str:
    for char in value:
        if ord(char) > 127:
            name = unicodedata.name(char, "unknown")
            look_alike = _ascii_look_alike(char)
            like = f", which looks like {look_alike!r}" if look_alike and name.startswith(("CYRILLIC", "GREEK")) else ""
            return f"it contains the non-ASCII character {char!r} (U+{ord(char):04X} {name}{like})"
    if not value:
        return "it is empty"
    if len(value) > limit:
        return f"it is {len(value)} characters long (at most {limit})"
    if "/" in value or "\\" in value or ".." in value:
        return "it contains a path separator or '..'"
    if any(c.isspace() for c in value):
        return "it contains whitespace"
    if value != value.lower():
        return "it contains uppercase letters"
    if value[0] == "-" or value[-1] == "-":
        return "it starts or ends with '-'"
    bad = sorted({c for c in value if not (c.isalnum() or c == "-")})
    return f"it contains {', '.join(repr(c) for c in bad)}" if bad else "it is not a valid name"


def explain_object_name(value: str) -> str | None:
    """None when ``value`` names a Kubernetes object (a DNS-1123 subdomain of at most 253 characters), else why not.

    Nodes, pods, ConfigMaps, DaemonSets and resource.k8s.io objects are all named so (k8s.io/apimachinery
    pkg/api/validation NameIsDNSSubdomain); the API server refuses any other name, so one in a state file was
    written by hand.
    """
    if len(value) <= 253 and _SUBDOMAIN_RE.fullmatch(value):
        return None
    return f"{value!r} is not a Kubernetes object name: {_name_flaw(value, 253)}"


def explain_label_key(key: str) -> str | None:
    """Kubernetes label key: optional DNS-subdomain prefix and '/', then a name of at most 63 characters."""
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not _SUBDOMAIN_RE.fullmatch(prefix)):
        return f"label key prefix {prefix!r} must be a lowercase DNS subdomain"
    if not name or len(name) > 63 or not _LABEL_NAME_RE.fullmatch(name):
        return (
            f"label key name {name!r} must be at most 63 characters of letters, digits, '-', '_' and '.', "
            "starting and ending with a letter or digit"
        )
    return None


def explain_label_value(value: str) -> str | None:
    if len(value) > 63 or not _LABEL_VALUE_RE.fullmatch(value):
        return (
            f"label value {value!r} must be at most 63 characters of letters, digits, '-', '_' and '.', "
            "starting and ending with a letter or digit"
        )
    return None
