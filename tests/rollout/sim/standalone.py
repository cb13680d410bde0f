"""The standalone NVIDIA device plugin chart (``nvidia-device-plugin``, a release such as ``nvdp``), beside the GPU
Operator, as ``../shared/research/standalone-plugin.md`` reads it from the chart (line numbers of
``../shared/upstream/device-plugin/chart-v0.17.4``; v0.20.0 is the same for what the model needs):

* Values are the chart's ``values.yaml`` (``k8s-device-plugin-v<version>-helm-values.yaml``) under the release's
  (Helm coalesce, :mod:`.helm`).
* Placement: the plugin DaemonSet's pod template carries ``nodeSelector`` and ``affinity`` as given
  (``templates/daemonset-device-plugin.yml:254-261``); a node runs the pod when every nodeSelector pair holds and
  one of the required ``nodeSelectorTerms`` holds, every expression of it (terms OR'ed, expressions AND'ed:
  Kubernetes ``NodeSelectorTerm``). The DaemonSet controller places by the current template whatever the
  update strategy, so a node that stops matching loses its pod (research §7, preparation 1).
* Rolls: a template change restarts every pod under ``RollingUpdate`` (``values.yaml:54-55``, rendered at
  ``daemonset-device-plugin.yml:32-35``) and none under ``OnDelete``; ``config.map`` puts ``checksum/config`` on
  the template (``_helpers.tpl:250-258``), so new config content is a template change too.
* Config: ``config.name`` (external) or ``config.map`` (the chart's ``<fullname>-configs``,
  ``_helpers.tpl:237-245``; ``configmap.yml``); with one, the init container runs the config-manager with
  ``DEFAULT_CONFIG`` and the chart's ``FALLBACK_STRATEGIES`` (``daemonset-device-plugin.yml:60-94``): a label
  must name a key, else the default, else ``named`` (key ``default``), ``single`` (the only key), ``empty``
  (``cmd/config-manager/main.go:334-392``); any error exits and the plugin never starts. The sidecar
  (``:96-132``) resolves a changed label again: a missing key exits it, the plugin keeps its old config.
* Only the device plugin DaemonSet is modelled: ``gfd.enabled`` defaults to false (``values.yaml:105-106``) and
  the MPS daemon needs an MPS config; a release that turns either on is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import helm
from .upstream import load_yaml

CHART = "nvidia-device-plugin"


def chart_values(upstream: Path, version: str) -> dict[str, Any]:
    path = upstream / "device-plugin" / f"k8s-device-plugin-v{version.lstrip('v')}-helm-values.yaml"
    if not path.is_file():
        raise LookupError(f"no standalone device plugin chart values for {version} in {upstream}")
    data: dict[str, Any] = load_yaml(path)
    return data


def fullname(release: str) -> str:
    """``_helpers.tpl:14-25``: the release name when it contains the chart name, else ``<release>-<chart>``."""
    return release if CHART in release else f"{release}-{CHART}"


@dataclass
class Release:
    name: str
    namespace: str
    version: str
    values: dict[str, Any]
    user_values: dict[str, Any] = field(default_factory=dict)

    @property
    def daemonset(self) -> str:
        return fullname(self.name)

    def template(self) -> tuple[Any, ...]:
        """What the pod template renders from, as far as the model tells templates apart."""
        config = self.values["config"]
        return (
            self.version,
            repr(self.values.get("nodeSelector")),
            repr(self.values.get("affinity")),
            config.get("name"),
            repr(config.get("map")),
            config.get("default"),
            repr(config.get("fallbackStrategies")),
        )

    @property
    def on_delete(self) -> bool:
        return (self.values.get("updateStrategy") or {}).get("type") == "OnDelete"

    def configmap(self) -> str:
        config = self.values["config"]
        if config.get("name"):
            return str(config["name"])
        return f"{self.daemonset}-configs" if config.get("map") else ""

    def schedules_on(self, labels: dict[str, str]) -> bool:
        selector = self.values.get("nodeSelector") or {}
        if any(labels.get(str(k)) != str(v) for k, v in selector.items()):
            return False
        required = ((self.values.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        if not required:
            return True
        return any(
            all(_holds(expression, labels) for expression in term.get("matchExpressions") or [])
            for term in required["nodeSelectorTerms"]
        )

    def resolve(self, label: str, files: dict[str, str]) -> tuple[str | None, str]:
        """(the key the config-manager picks, "" for no file; or None with its error)."""
        config = self.values["config"]
        if label:
            return (label, "") if label in files else (None, f"specified config {label} does not exist")
        default = config.get("default") or ""
        if default:
            return (default, "") if default in files else (None, f"specified config {default} does not exist")
        for strategy in config.get("fallbackStrategies") or []:
            if strategy == "named" and "default" in files:
                return "default", ""
            if strategy == "single" and len(files) == 1:
                return next(iter(files)), ""
            if strategy == "empty":
                return "", ""
        return None, "no configuration selected and no fallback applies"


def _holds(expression: dict[str, Any], labels: dict[str, str]) -> bool:
    """A NodeSelectorRequirement (``In``, ``NotIn``, ``Exists``, ``DoesNotExist``; ``NotIn`` holds on a node
    without the key, as the scheduler's label selector)."""
    key, operator = str(expression["key"]), expression["operator"]
    values = [str(v) for v in expression.get("values") or []]
    if operator == "In":
        return labels.get(key) in values
    if operator == "NotIn":
        return labels.get(key) not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    raise AssertionError(f"the model has no node selector operator {operator}")


def upgrade(
    upstream: Path,
    current: Release | None,
    name: str,
    namespace: str,
    version: str,
    files: list[dict[str, Any]],
    *,
    reuse: bool,
) -> Release:
    """``-f`` files and ``--set`` / ``--set-json`` documents, later ones winning; ``--reuse-values`` as Helm does it
    (:func:`.helm.upgrade`)."""
    previous = None if current is None else helm.Release(current.version, current.user_values, current.values)
    result = helm.upgrade(previous, version, chart_values(upstream, version), files, reuse_values=reuse)
    if (result.values.get("gfd") or {}).get("enabled"):
        raise AssertionError("the model has no standalone GFD (gfd.enabled)")
    return Release(name, namespace, version.lstrip("v"), result.values, result.user_values)


def configmap_data(release: Release) -> dict[str, str] | None:
    """The chart's own ConfigMap (``configmap.yml``: one key per ``config.map`` entry), or None without one."""
    config = release.values["config"]
    if config.get("name") or not config.get("map"):
        return None
    return {str(k): str(v) for k, v in config["map"].items()}
