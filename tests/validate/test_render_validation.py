"""A generated artifact that fails its own schema is an InternalError naming the file and the field."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from gpustack_gen.compile import compile_cluster
from gpustack_gen.compile.artifact import Artifact, EmbeddedYaml
from gpustack_gen.errors import InternalError
from gpustack_gen.model import Cluster, load_fleet
from gpustack_gen.validate.artifacts import validate_artifacts

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fleet.yaml"


def _compiled(name: str) -> tuple[Cluster, list[Artifact]]:
    cluster = load_fleet(EXAMPLE).cluster(name)
    assert cluster is not None
    artifacts = compile_cluster(cluster)
    validate_artifacts(cluster, artifacts)  # the real output is valid
    return cluster, artifacts


def _document(artifacts: list[Artifact], kind: str) -> dict[str, Any]:
    return next(a for a in artifacts if a.kind == kind).documents[0]


def _failure(cluster: Cluster, artifacts: list[Artifact]) -> tuple[str, str, str]:
    with pytest.raises(InternalError) as caught:
        validate_artifacts(cluster, artifacts)
    return caught.value.artifact, caught.value.path, str(caught.value)


def test_helm_values_of_the_wrong_type() -> None:
    cluster, artifacts = _compiled("prod")
    _document(artifacts, "helm-values")["cdi"]["enabled"] = "yes"
    artifact, path, message = _failure(cluster, artifacts)
    assert (artifact, path) == ("gpu-operator-values.yaml", "cdi.enabled")
    assert "GPU Operator v25.3.3" in message


def test_a_patch_key_the_chart_version_lacks() -> None:
    cluster, artifacts = _compiled("prod")
    _document(artifacts, "clusterpolicy-patch")["spec"]["cdi"]["nriPluginEnabled"] = True  # v26.3.0+
    artifact, path, _ = _failure(cluster, artifacts)
    assert artifact == "clusterpolicy-patch.yaml"
    assert path.startswith("spec.cdi")


def test_an_embedded_device_plugin_config_with_bad_replicas() -> None:
    cluster, artifacts = _compiled("prod")
    data = _document(artifacts, "device-plugin-configmap")["data"]
    config = copy.deepcopy(data["t4"].data)  # the compilers' data is cached per cluster: never edit it in place
    config["sharing"]["timeSlicing"]["resources"][0]["replicas"] = 1
    data["t4"] = EmbeddedYaml(config)
    artifact, path, message = _failure(cluster, artifacts)
    assert (artifact, path) == ("device-plugin-config.yaml", "data.t4.sharing.timeSlicing.resources[0].replicas")
    assert ">= 2" in message


def test_an_embedded_mig_parted_config_with_devices_while_disabled() -> None:
    cluster, artifacts = _compiled("train")
    data = _document(artifacts, "mig-parted-configmap")["data"]
    config = copy.deepcopy(data["config.yaml"].data)
    config["mig-configs"]["all-disabled"][0]["mig-devices"] = {"1g.5gb": 1}
    data["config.yaml"] = EmbeddedYaml(config)
    artifact, path, _ = _failure(cluster, artifacts)
    assert artifact == "mig-parted-config.yaml"
    assert path == "data.config.yaml.mig-configs.all-disabled[0].mig-devices"
