"""A device-plugin or mig-manager ConfigMap: the object itself, then each config in its data.

- the ConfigMap against the Kubernetes schema (``metadata.namepsace`` is an error); a data value written
  as a mapping instead of a string gets the ``|`` hint;
- a ConfigMap outside the Operator's namespace: an error, as the Operator reads ConfigMaps only from its
  own and the plugin pods wait for a missing one (gpu-operator#412); no namespace: a warning;
- no data; a device-plugin key that is not a valid label value (nodes select it by label);
- edits to ``default-mig-parted-config``: a warning, as the Operator resets them (gpu-operator#384).

Each config in the data is then checked by its own rule (``device-plugin-config``, ``mig-parted-config``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...model.names import explain_label_value
from ...validate.findings import format_path
from ...validate.kubernetes import check_kubernetes_object
from ..detect import DocumentKind
from ..locate import Source
from ..reporter import WARNING, LintOptions, Reporter, mapping, parse_embedded, value_at
from . import device_plugin_config, mig_parted_config

ID = "configmap"
KINDS: tuple[DocumentKind, ...] = ("device-plugin-configmap", "mig-parted-configmap")


def check(doc: Any, kind: DocumentKind, source: Source, prefix: str, r: Reporter, o: LintOptions) -> None:
    with r.running(ID):
        for finding in check_kubernetes_object(doc, o.kubernetes):
            hint = finding.hint
            if finding.path.startswith("data") and isinstance(value_at(doc, finding.path), Mapping):
                hint = "ConfigMap data values are strings: write the key followed by '|' and indent the config below it"
            r.add(source, prefix, finding.path, finding.message, hint)
        _namespace(doc, source, r, o)
        data = mapping(doc.get("data"))
        if not data:
            r.add(source, prefix, "data", "no data: the ConfigMap holds no config", "add the config under data")
        elif kind == "device-plugin-configmap":
            _device_plugin_data(data, source, r, o)
        else:
            _mig_manager_data(doc, data, source, r, o)


def _namespace(doc: Mapping[str, Any], source: Source, r: Reporter, o: LintOptions) -> None:
    metadata = doc.get("metadata")
    namespace = metadata.get("namespace") if isinstance(metadata, Mapping) else None
    if namespace is None:
        r.add(
            source,
            "",
            "metadata",
            f"no metadata.namespace: kubectl puts the ConfigMap in the current namespace, and the GPU Operator "
            f"reads it only from {o.namespace!r}",
            f"set metadata.namespace: {o.namespace} (or let kustomize set it)",
            WARNING,
        )
    elif namespace != o.namespace:
        r.add(
            source,
            "",
            "metadata.namespace",
            f"ConfigMap in namespace {namespace!r}: the GPU Operator only reads ConfigMaps from its own "
            f"namespace {o.namespace!r}, and the plugin pods wait for a missing one (gpu-operator#412)",
            f"set metadata.namespace: {o.namespace}, or pass --namespace if the Operator runs in {namespace!r}",
        )


def _device_plugin_data(data: Mapping[str, Any], source: Source, r: Reporter, o: LintOptions) -> None:
    for key in data:
        path = format_path(["data", key])
        if isinstance(key, str) and explain_label_value(key) is not None:
            r.add(
                source,
                "",
                path,
                f"key {key!r} is not a valid label value",
                "nodes select a config with the label nvidia.com/device-plugin.config=<key>: use at most 63 "
                "letters, digits, '-', '_' and '.'",
            )
        parsed = parse_embedded(data, key, r, source, "data")
        if parsed is not None:
            device_plugin_config.check(parsed[0], "device-plugin-config", parsed[1], path, r, o)


def _mig_manager_data(
    doc: Mapping[str, Any], data: Mapping[str, Any], source: Source, r: Reporter, o: LintOptions
) -> None:
    metadata = doc.get("metadata")
    if isinstance(metadata, Mapping) and metadata.get("name") == "default-mig-parted-config":
        r.add(
            source,
            "",
            "metadata.name",
            "the GPU Operator owns default-mig-parted-config and resets edits to it (gpu-operator#384)",
            "create a ConfigMap with another name and set migManager.config.name to it",
            WARNING,
        )
    mig_parted_config.check_data(data, source, "data", r, o)
