"""Conformance with upstream's own configs: what upstream accepts, we accept; derived mistakes fail.

Reads the read-only reference data in ``../shared/upstream`` (fixture ``upstream``):

- ``device-plugin/k8s-device-plugin-<tag>-readme-config-examples.yaml``: every README block starting with
  ``version: v1``, one YAML document each, annotated with the verdict of that tag's upstream parser.
  Placeholder blocks are kept commented out (they load as empty documents and are skipped).
- ``device-plugin/gpu-operator-v26.7.0-tests-plugin-config.yaml``: the GPU Operator's own e2e config,
  no verdict comment; GPU Operator v26.7.0 pins device plugin v0.20.0.
- ``mig-parted/*.yaml``: mig-parted config files and GPU Operator ConfigMaps (``data["config.yaml"]``).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from gpustack_gen.validate import check_device_plugin_config, check_mig_parted_config

# GPU Operator test file -> the device plugin version that operator release pins.
OPERATOR_TEST_CONFIG = "gpu-operator-v26.7.0-tests-plugin-config.yaml"
OPERATOR_TEST_CONFIG_PLUGIN_VERSION = "v0.20.0"

# Upstream-accepted documents that our check rejects on purpose, keyed by document id
# ("<file>:<README line>"), each with the reason. Currently none: no README example relies on an
# ignored key (resources / rename / devices) or an unknown key. Adding an entry here needs a reason;
# test_exceptions_are_still_needed fails when an entry starts passing or disappears.
EXCEPTIONS: dict[str, str] = {}

# Not exceptions, but documented: the README's MPS examples are accepted upstream only with an MPS
# root (``--mps-root``; the Helm chart and the GPU Operator pass MPS_ROOT). Their verdict comments
# say so, and they are checked with mps_root_from_operator=True; without it we must flag flags.mpsRoot,
# exactly like upstream's "using MPS requires --mps-root to be specified".
EXPECTED_MPS_ROOT_DOCS = {
    "k8s-device-plugin-v0.17.4-readme-config-examples.yaml:541",
    "k8s-device-plugin-v0.17.4-readme-config-examples.yaml:565",
    "k8s-device-plugin-v0.20.0-readme-config-examples.yaml:552",
    "k8s-device-plugin-v0.20.0-readme-config-examples.yaml:576",
}

_README_FILE = re.compile(r"k8s-device-plugin-(v\d+\.\d+\.\d+)-readme-config-examples\.yaml\Z")
_BLOCK_LINE = re.compile(r"code block starting at line (\d+)")


def _yaml() -> YAML:
    return YAML(typ="safe")  # YAML 1.2, like sigs.k8s.io/yaml closely enough for these files


@dataclass(frozen=True)
class Doc:
    id: str
    version: str
    data: Any
    accepted: bool  # upstream's verdict, with an MPS root where the verdict needs one
    needs_mps_root: bool


def _split_documents(text: str) -> list[str]:
    chunks: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.strip() == "---":
            chunks.append([])
        else:
            chunks[-1].append(line)
    return ["\n".join(chunk) + "\n" for chunk in chunks]


def _device_plugin_docs(upstream: Path) -> list[Doc]:
    docs: list[Doc] = []
    folder = upstream / "device-plugin"
    for path in sorted(folder.glob("*readme-config-examples.yaml")):
        match = _README_FILE.search(path.name)
        assert match, path.name
        version = match.group(1)
        for index, chunk in enumerate(_split_documents(path.read_text(encoding="utf-8"))):
            data = _yaml().load(chunk)
            comments = [line for line in chunk.splitlines() if line.startswith("#")]
            if data is None:
                # header comments, or a placeholder block kept commented out
                assert index == 0 or any("kept commented out" in c for c in comments), (path.name, index)
                continue
            block = next((m.group(1) for c in comments if (m := _BLOCK_LINE.search(c))), str(index))
            verdict = next(c for c in comments if "upstream parser" in c)
            retry = next((c for c in comments if c.startswith("# with --mps-root=")), "")
            needs_root = "INVALID" in verdict and "--mps-root" in verdict and "): OK:" in retry
            accepted = "): OK:" in verdict or needs_root
            docs.append(Doc(f"{path.name}:{block}", version, data, accepted, needs_root))
    operator = folder / OPERATOR_TEST_CONFIG
    data = _yaml().load(operator.read_text(encoding="utf-8"))
    docs.append(Doc(OPERATOR_TEST_CONFIG, OPERATOR_TEST_CONFIG_PLUGIN_VERSION, data, True, False))
    return docs


def _mig_parted_configs(upstream: Path) -> list[tuple[str, Any]]:
    configs = []
    for path in sorted((upstream / "mig-parted").glob("*.yaml")):
        data = _yaml().load(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("kind") == "ConfigMap":
            data = _yaml().load(data["data"]["config.yaml"])
        configs.append((path.name, data))
    return configs


# --- device plugin -------------------------------------------------------------------------------


def test_reference_files_are_all_there(upstream: Path) -> None:
    docs = _device_plugin_docs(upstream)
    per_file: dict[str, int] = {}
    for doc in docs:
        per_file[doc.id.split(":")[0]] = per_file.get(doc.id.split(":")[0], 0) + 1
    assert len(per_file) == 4, per_file
    assert all(count >= 1 for count in per_file.values())
    assert {d.id for d in docs if d.needs_mps_root} == EXPECTED_MPS_ROOT_DOCS


def test_every_upstream_accepted_device_plugin_example_passes(upstream: Path) -> None:
    failures = {}
    for doc in _device_plugin_docs(upstream):
        if not doc.accepted or doc.id in EXCEPTIONS:
            continue
        findings = check_device_plugin_config(
            doc.data, device_plugin_version=doc.version, mps_root_from_operator=doc.needs_mps_root
        )
        if findings:
            failures[doc.id] = findings
    assert failures == {}


def test_mps_examples_need_an_mps_root_like_upstream(upstream: Path) -> None:
    for doc in _device_plugin_docs(upstream):
        if doc.needs_mps_root:
            findings = check_device_plugin_config(
                doc.data, device_plugin_version=doc.version, mps_root_from_operator=False
            )
            assert [f.path for f in findings] == ["flags.mpsRoot"], doc.id
            assert "--mps-root" in findings[0].message


def test_exceptions_are_still_needed(upstream: Path) -> None:
    docs = {d.id: d for d in _device_plugin_docs(upstream)}
    for doc_id, reason in EXCEPTIONS.items():
        assert reason, doc_id
        assert doc_id in docs, f"stale exception {doc_id}: document no longer exists"
        doc = docs[doc_id]
        findings = check_device_plugin_config(
            doc.data, device_plugin_version=doc.version, mps_root_from_operator=doc.needs_mps_root
        )
        assert findings, f"stale exception {doc_id}: it passes now"


def _doc(upstream: Path, version: str, predicate: Any) -> Any:
    for doc in _device_plugin_docs(upstream):
        if doc.version == version and doc.id.startswith("k8s") and predicate(doc.data):
            return copy.deepcopy(doc.data)
    raise AssertionError(f"no matching upstream example for {version}")


def _is_time_slicing(data: Any) -> bool:
    return "timeSlicing" in data.get("sharing", {})


def _is_mps(data: Any) -> bool:
    return "mps" in data.get("sharing", {})


def _has_flags(data: Any) -> bool:
    return "flags" in data


def test_known_bad_replicas(upstream: Path) -> None:
    config = _doc(upstream, "v0.20.0", _is_time_slicing)
    config["sharing"]["timeSlicing"]["resources"][0]["replicas"] = 1
    findings = check_device_plugin_config(config, device_plugin_version="v0.20.0", mps_root_from_operator=True)
    assert [f.path for f in findings] == ["sharing.timeSlicing.resources[0].replicas"]
    assert "expected an integer >= 2, got 1" in findings[0].message


def test_known_bad_rename_by_default_under_flags(upstream: Path) -> None:
    """NVIDIA/k8s-device-plugin#1433, built from the README's renameByDefault example."""
    config = _doc(upstream, "v0.17.4", lambda d: d.get("sharing", {}).get("timeSlicing", {}).get("renameByDefault"))
    config["flags"] = {"renameByDefault": config["sharing"]["timeSlicing"].pop("renameByDefault")}
    findings = check_device_plugin_config(config, device_plugin_version="v0.17.4", mps_root_from_operator=True)
    assert [f.path for f in findings] == ["flags.renameByDefault"]
    assert "sharing.timeSlicing.renameByDefault" in findings[0].message


def test_known_bad_mig_strategy_case(upstream: Path) -> None:
    config = _doc(upstream, "v0.20.0", _has_flags)
    config["flags"]["migStrategy"] = "Mixed"
    findings = check_device_plugin_config(config, device_plugin_version="v0.20.0", mps_root_from_operator=True)
    assert [f.path for f in findings] == ["flags.migStrategy"]
    assert "'Mixed'" in findings[0].message


def test_known_bad_wildcard_resource_name(upstream: Path) -> None:
    config = _doc(upstream, "v0.20.0", _is_time_slicing)
    config["sharing"]["timeSlicing"]["resources"][0]["name"] = "nvidia.com/mig-*"
    findings = check_device_plugin_config(config, device_plugin_version="v0.20.0", mps_root_from_operator=True)
    assert [f.path for f in findings] == ["sharing.timeSlicing.resources[0].name"]


def test_known_bad_cdi_cri_on_v0_14_5(upstream: Path) -> None:
    config = _doc(upstream, "v0.14.5", _has_flags)
    config["flags"]["plugin"]["deviceListStrategy"] = "cdi-cri"
    findings = check_device_plugin_config(config, device_plugin_version="v0.14.5", mps_root_from_operator=True)
    assert [f.path for f in findings] == ["flags.plugin.deviceListStrategy"]
    assert "cdi-cri" in findings[0].message


def test_known_bad_mps_with_mixed(upstream: Path) -> None:
    config = _doc(upstream, "v0.20.0", _is_mps)
    config["flags"] = {"migStrategy": "mixed"}
    findings = check_device_plugin_config(config, device_plugin_version="v0.20.0", mps_root_from_operator=True)
    assert [f.path for f in findings] == ["flags.migStrategy"]
    assert "MPS" in findings[0].message


def test_known_bad_mps_on_v0_14_5(upstream: Path) -> None:
    """v0.14.5 accepts sharing.mps only because it ignores it: no sharing at all would happen."""
    config = _doc(upstream, "v0.17.4", _is_mps)
    findings = check_device_plugin_config(config, device_plugin_version="v0.14.5", mps_root_from_operator=True)
    assert [f.path for f in findings] == ["sharing.mps"]


# --- mig-parted ----------------------------------------------------------------------------------


def test_every_upstream_mig_parted_config_passes(upstream: Path) -> None:
    configs = _mig_parted_configs(upstream)
    assert len(configs) == 6
    failures = {name: check_mig_parted_config(data) for name, data in configs}
    assert {name: found for name, found in failures.items() if found} == {}


def test_mig_parted_default_config_size(upstream: Path) -> None:
    configs = dict(_mig_parted_configs(upstream))
    assert len(configs["mig-parted-v0.15.0-config-default.yaml"]["mig-configs"]) == 81
    assert len(configs["mig-parted-v0.12.3-config-default.yaml"]["mig-configs"]) == 68


def test_known_bad_unquoted_device_filters(upstream: Path) -> None:
    path = upstream / "mig-parted" / "mig-parted-v0.15.0-examples-dgx-station-80gb-config.yaml"
    text = re.sub(r'"(0x[0-9A-Fa-f]{8})"', r"\1", path.read_text(encoding="utf-8"))
    config = _yaml().load(text)
    findings = check_mig_parted_config(config)
    filters = sum(1 for specs in config["mig-configs"].values() for spec in specs if "device-filter" in spec)
    assert filters > 0 and len(findings) == filters
    assert all(f.path.endswith(".device-filter") and "(an integer)" in f.message for f in findings)


def test_known_bad_node_selector_and_disabled_with_devices(upstream: Path) -> None:
    config = dict(_mig_parted_configs(upstream))["mig-parted-v0.15.0-config-default.yaml"]
    config = copy.deepcopy(config)
    config["mig-configs"]["all-disabled"][0]["node-selector"] = {"gpu": "a100"}
    config["mig-configs"]["all-disabled"][0]["mig-devices"] = {"1g.10gb": 7}
    findings = check_mig_parted_config(config)
    assert [f.path for f in findings] == [
        "mig-configs.all-disabled[0].mig-devices",
        "mig-configs.all-disabled[0].node-selector",
    ]
    assert "mig-enabled is false" in findings[0].message
    assert "unknown key 'node-selector'" in findings[1].message
