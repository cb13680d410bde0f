"""The chart defaults the operands' tolerations are merged with are the pinned charts' own, and each chart's
template puts that value on the operand's pods (where the template is in ../shared/upstream)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _fleets import chart_values

from gpustack_gen.compile.backends.hami.values import PLUGIN_TOLERATIONS
from gpustack_gen.compile.operator import OPERAND_TOLERATIONS
from gpustack_gen.versions.dra import DRA_VERSIONS, DraDriverVersion
from gpustack_gen.versions.gpu_operator import OPERATOR_VERSIONS, OperatorVersion

_CHARTS = {
    "25.12.0": "v25.12.0/deployments/helm/nvidia-dra-driver-gpu",
    "0.4.1": "v0.4.1/deployments/helm/dra-driver-nvidia-gpu",
}


def _yaml(path: Path) -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def _dicts(entries: Any) -> list[dict[str, Any]]:
    return [entry._asdict() for entry in entries]


@pytest.mark.parametrize("release", OPERATOR_VERSIONS, ids=lambda r: r.version)
def test_the_operator_default_is_the_chart_s(upstream: Path, release: OperatorVersion) -> None:
    if not (upstream / "gpu-operator" / release.version / "values.yaml").is_file():
        pytest.skip(f"{release.version}: no values.yaml in the upstream folder (the table is taken to hold)")
    assert chart_values(upstream, release.version)["daemonsets"]["tolerations"] == _dicts(OPERAND_TOLERATIONS)


def test_hami_s_plugin_default_is_the_chart_s_and_its_template_renders_it(upstream: Path) -> None:
    chart = upstream / "hami" / "v2.10.0" / "charts" / "hami"
    assert _yaml(chart / "values.yaml")["devicePlugin"]["tolerations"] == _dicts(PLUGIN_TOLERATIONS)
    template = (chart / "templates" / "device-plugin" / "daemonsetnvidia.yaml").read_text(encoding="utf-8")
    assert "tolerations: {{ toYaml .Values.devicePlugin.tolerations | nindent 8 }}" in template


@pytest.mark.parametrize("release", [r for r in DRA_VERSIONS if r.verified], ids=lambda r: r.version)
def test_the_dra_kubelet_plugin_default_is_the_chart_s(upstream: Path, release: DraDriverVersion) -> None:
    values = _yaml(upstream / "dra-driver" / _CHARTS[release.version] / "values.yaml")
    assert values["kubeletPlugin"]["tolerations"] == _dicts(release.kubelet_plugin_tolerations)
