"""The release's values the imported fleet would lose: set in the values given to ``import``, but neither
modelled nor passed through, so the plan's ``helm upgrade`` (the user's values file, then gpustack-gen's)
leaves them to the chart default or sets them to something else."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..helm_values import MERGED_LISTS, dropped_keys
from .recover import OWNED_KEYS, lookup

# Compared through what they do (the settings, the configs the ConfigMaps hold), or renamed on purpose.
_COMPARED_ELSEWHERE = (*OWNED_KEYS, "devicePlugin.config", "migManager.config")


def values_lost(
    release: Mapping[str, Any], user: Mapping[str, Any], rendered: Mapping[str, Any], accounted: frozenset[str]
) -> Iterator[str]:
    """One line per value of ``release`` that ``helm upgrade --values USER --values RENDERED`` would not keep;
    ``accounted``: keys the fleet keeps without passing them."""
    passed = [dict(user), dict(rendered)]
    skipped = (*_COMPARED_ELSEWHERE, *sorted(accounted))
    for key in dropped_keys(dict(release), passed, skipped):
        _, value = lookup(release, key)
        yield f"values {key}: the release has {_show(value)}; the fleet neither models nor passes it"
    for key in _set_in(release):
        if key in MERGED_LISTS or _under(key, skipped):
            continue
        _, value = lookup(release, key)
        final = _final(passed, key)
        if final is not _UNSET and final != value:
            yield f"values {key}: the release has {_show(value)}, the upgrade passes {_show(final)}"


_UNSET = object()


def _final(passed: list[dict[str, Any]], key: str) -> Any:
    """What the last file that sets ``key`` gives it (Helm merges files in order, the last one wins)."""
    final: Any = _UNSET
    for values in passed:
        found, value = lookup(values, key)
        if found:
            final = value
    return final


def _set_in(data: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    for key, value in data.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            yield from _set_in(value, f"{path}.")
        else:
            yield path


def _under(key: str, prefixes: tuple[str, ...]) -> bool:
    return any(key == p or key.startswith(f"{p}.") for p in prefixes)


def _show(value: Any) -> str:
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
