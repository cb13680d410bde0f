"""Which of a release's user-supplied values an upgrade would drop.

``helm upgrade`` without ``--reuse-values`` renders from the values it is given alone: the release's old values
count only when none are given (helm v3.21.4 pkg/action/upgrade.go:585-588). Files merge in order, maps key by
key, anything else replaced (pkg/cli/values/options.go:44-60,108-124). So a value the release has (``helm get
values``) survives the plan's upgrade only where one of the passed files sets its key or an ancestor of it to
something other than a map.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

# Lists gpustack-gen renders as the chart's default plus what the pools' taints need: a user's own items there
# are still theirs, and a file passed after theirs (gpustack-gen's) replaces the whole list.
MERGED_LISTS = ("daemonsets.tolerations",)


def dropped_keys(live: Any, passed: list[Any], owned: tuple[str, ...] = ()) -> list[str]:
    """The dotted keys ``live`` sets that none of ``passed`` (the files given to the upgrade) sets, but for those
    at or under an ``owned`` key (gpustack-gen's own values, which a change may drop on purpose); a key of
    :data:`MERGED_LISTS` also counts where an item of its live list is not in the list the upgrade ends with."""
    return [path for path, keys in _leaves(live) if _dropped(live, passed, owned, path, keys)]


def _dropped(live: Any, passed: list[Any], owned: tuple[str, ...], path: str, keys: tuple[str, ...]) -> bool:
    if path in MERGED_LISTS:
        given = [_value(values, keys) for values in passed if _sets(values, keys)]
        return _items_lost(_value(live, keys), given)
    if any(path == key or path.startswith(f"{key}.") for key in owned):
        return False
    return not any(_sets(values, keys) for values in passed)


def _items_lost(live: Any, given: list[Any]) -> bool:
    """Whether an item of the live list is missing from the last list given (a list replaces the one before)."""
    if not given:
        return True
    final = given[-1]
    if final is None:  # a file nulls the key (or an ancestor): Helm deletes it, as that file asks
        return False
    items = live if isinstance(live, list) else [live]
    return any(item not in (final if isinstance(final, list) else []) for item in items)


def _value(values: Any, keys: tuple[str, ...]) -> Any:
    for key in keys:
        values = values.get(key) if isinstance(values, dict) else None
    return values


def _leaves(data: Any, keys: tuple[str, ...] = ()) -> Iterator[tuple[str, tuple[str, ...]]]:
    if isinstance(data, dict) and data:
        for key, value in data.items():
            yield from _leaves(value, (*keys, str(key)))
    elif keys:
        yield ".".join(keys), keys


def _sets(values: Any, keys: tuple[str, ...]) -> bool:
    for key in keys:
        if not isinstance(values, dict) or key not in values:
            return False
        values = values[key]
        if not isinstance(values, dict):
            return True  # a scalar or a list replaces whatever lies below
    return True
