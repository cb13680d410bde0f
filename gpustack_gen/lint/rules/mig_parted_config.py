"""A mig-parted config (bare, or the ``config.yaml`` of a mig-manager ConfigMap or of Helm's
``migManager.config.data``): its schema, and what the pinned mig-manager can read.

- a MIG profile the pinned mig-manager cannot parse (``1g.24gb-me`` before v25.3.3): an error, since one
  unreadable name fails the whole config on every node;
- a config name that is not a valid label value: an error, as nodes select it with ``nvidia.com/mig.config``;
- mig-manager data without the key ``config.yaml``: an error, as it reads no other key (gpu-operator#802,
  PR #1273).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...catalog.profile_grammar import unreadable_profile
from ...model.names import explain_label_value
from ...validate.findings import format_path
from ...validate.mig_parted import check_mig_parted_config
from ..detect import DocumentKind
from ..locate import Source, join_path
from ..reporter import LintOptions, Reporter, parse_embedded

ID = "mig-parted-config"
KINDS: tuple[DocumentKind, ...] = ("mig-parted-config",)


def check(config: Any, kind: DocumentKind, source: Source, prefix: str, r: Reporter, o: LintOptions) -> None:
    with r.running(ID):
        r.add_findings(source, prefix, check_mig_parted_config(config))
        configs = config.get("mig-configs")
        if isinstance(configs, Mapping):
            for name, entries in configs.items():
                _entries(name, entries, source, prefix, r, o)


def _entries(name: Any, entries: Any, source: Source, prefix: str, r: Reporter, o: LintOptions) -> None:
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        devices = entry.get("mig-devices") if isinstance(entry, Mapping) else None
        for profile in devices if isinstance(devices, Mapping) else {}:
            unreadable = unreadable_profile(o.operator, str(profile))
            if unreadable is not None:
                path = format_path(["mig-configs", name, index, "mig-devices", profile])
                r.add(source, prefix, path, *unreadable)
    if isinstance(name, str) and explain_label_value(name) is not None:
        r.add(
            source,
            prefix,
            format_path(["mig-configs", name]),
            f"config name {name!r} is not a valid label value",
            "nodes select it with the label nvidia.com/mig.config=<name>: use at most 63 letters, "
            "digits, '-', '_' and '.', starting and ending with a letter or digit",
        )


def check_data(data: Mapping[str, Any], source: Source, prefix: str, r: Reporter, o: LintOptions) -> None:
    """The data of a mig-manager ConfigMap (or Helm ``migManager.config.data``): one key, config.yaml."""
    with r.running(ID):
        if "config.yaml" not in data:
            keys = [str(k) for k in data]
            at = format_path([keys[0]]) if keys else ""
            r.add(
                Source(data, anchor=source.anchor),  # ``prefix`` names ``data``: locate within it
                prefix,
                at,
                f"mig-manager reads only the key config.yaml; found {', '.join(repr(k) for k in keys) or 'no keys'}",
                f"rename {keys[0]!r} to config.yaml" if keys else "add the mig-parted config under the key config.yaml",
            )
        for key in data:
            parsed = parse_embedded(data, key, r, source, prefix)
            if parsed is not None and (key == "config.yaml" or "mig-configs" in parsed[0]):
                check(parsed[0], "mig-parted-config", parsed[1], join_path(prefix, format_path([key])), r, o)
