"""Helm's value handling on ``helm upgrade --install`` (helm/helm@v3.21.4).

* ``pkg/chartutil/coalesce.go:264-323`` ``CoalesceTables``: the new values win; maps merge key by key,
  scalars and lists are replaced; a ``null`` in the new values deletes the key (``:295-308``), and a
  ``null`` that survives removes the chart default too (``coalesceValues`` ``:222-229``).
* ``pkg/action/upgrade.go:552-590`` ``reuseValues``: ``--reuse-values`` merges the old user values under
  the new ones and renders with the OLD chart's coalesced values as defaults (``chart.Values = oldVals``);
  without it only the new ``-f`` files count, over the new chart's values.yaml.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any


def coalesce(dst: dict[str, Any], src: dict[str, Any]) -> dict[str, Any]:
    """``dst`` over ``src`` (dst wins), as ``CoalesceTables``; nulls in dst delete."""
    out = copy.deepcopy(src)
    for key, value in dst.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = coalesce(value, out[key])
        else:
            out[key] = copy.deepcopy(value)
    return out


@dataclass
class Release:
    chart_version: str
    user_values: dict[str, Any] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)  # what the templates render from


def upgrade(
    current: Release | None,
    chart_version: str,
    chart_defaults: dict[str, Any],
    files: list[dict[str, Any]],
    *,
    reuse_values: bool,
) -> Release:
    new_user: dict[str, Any] = {}
    for document in files:  # later -f files win
        new_user = coalesce(document, new_user)
    defaults = chart_defaults
    if reuse_values and current is not None:
        new_user = coalesce(new_user, current.user_values)
        defaults = current.values  # the old chart's coalesced values
    return Release(chart_version, new_user, coalesce(new_user, defaults))
