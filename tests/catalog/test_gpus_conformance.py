"""The catalog literals agree with ``gpu-facts.yaml`` value for value, and hold together internally."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from gpustack_gen.catalog import GPUS, GpuModel, MigProfile, get_gpu

# gpu-facts.yaml model -> catalog ids. Split entries: 'A2 / A16' by label, 'B300 / GB300' by PCI device id.
FACT_MODELS: dict[str, tuple[str, ...]] = {
    "A30-24GB": ("a30-24gb",),
    "A100-40GB": ("a100-40gb",),
    "A100-80GB": ("a100-80gb",),
    "H100-80GB": ("h100-80gb",),
    "H100-NVL-94GB": ("h100-nvl-94gb",),
    "H100-96GB / GH200-96GB": ("h100-96gb",),
    "H200-141GB": ("h200-141gb",),
    "GH200-144GB-HBM3e": ("gh200-144gb",),
    "B200-180GB": ("b200-180gb",),
    "GB200-186GB": ("gb200-186gb",),
    "RTX-PRO-6000-Blackwell-96GB": ("rtx-pro-6000-blackwell-96gb",),
    "B300 / GB300 (data from mig-parted only)": ("b300", "gb300"),
    "T4": ("tesla-t4",),
    "V100": ("v100",),
    "A10": ("a10",),
    "A10G": ("a10g",),
    "A40": ("a40",),
    "A2 / A16": ("a2", "a16"),
    "L4": ("l4",),
    "L40": ("l40",),
    "L40S": ("l40s",),
    "RTX A6000": ("rtx-a6000",),
    "RTX 6000 Ada": ("rtx-6000-ada",),
}
SPLIT_BY_DEVICE = {"b300": "0x318210DE", "gb300": "0x31C210DE"}
SPLIT_BY_LABEL = {"a2": "NVIDIA-A2", "a16": "NVIDIA-A16"}
SPLIT_BY_NVML_NAME = {"a2": "NVIDIA A2", "a16": "NVIDIA A16"}


@pytest.fixture(scope="module")
def facts(upstream: Path) -> dict[str, dict[str, Any]]:
    data = YAML(typ="safe").load((upstream / "gpu-facts.yaml").read_text(encoding="utf-8"))
    return {entry["model"]: entry for entry in data["gpus"]}


def _model(gpu_id: str) -> GpuModel:
    gpu = get_gpu(gpu_id)
    assert gpu is not None, gpu_id
    return gpu


def _expected(entry: dict[str, Any], gpu_id: str) -> dict[str, Any]:
    """The entry's values for one catalog model, resolving the two split entries."""
    expected = dict(entry)
    if gpu_id in SPLIT_BY_DEVICE:
        device = SPLIT_BY_DEVICE[gpu_id]
        expected["pci_device_ids"] = [device]
        expected["mig_profiles"] = entry["mig_profiles_by_device"][device]
        expected["mig_parted_all_balanced"] = entry["mig_parted_all_balanced_by_device"][device]
    if gpu_id in SPLIT_BY_LABEL:
        expected["gpu_product_labels"] = [SPLIT_BY_LABEL[gpu_id]]
        expected["nvml_names"] = [SPLIT_BY_NVML_NAME[gpu_id]]
    return expected


def _profile_facts(profile: MigProfile) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "name": profile.name,
        "compute_slices": profile.compute_slices,
        "memory_slices": profile.memory_slices,
        "max_instances": profile.max_instances,
        "mixed_strategy_resource": profile.resource_name,
    }
    if profile.placement_starts is not None:
        facts["placement_starts"] = list(profile.placement_starts)
        facts["placement_size"] = profile.placement_size
    return facts


def test_every_fact_model_is_covered_once(facts: dict[str, dict[str, Any]]) -> None:
    assert set(facts) == set(FACT_MODELS)
    mapped = [gpu_id for ids in FACT_MODELS.values() for gpu_id in ids]
    assert sorted(mapped) == sorted(gpu.id for gpu in GPUS)


@pytest.mark.parametrize("model", sorted(FACT_MODELS))
def test_model_matches_facts(facts: dict[str, dict[str, Any]], model: str) -> None:
    for gpu_id in FACT_MODELS[model]:
        gpu = _model(gpu_id)
        entry = _expected(facts[model], gpu_id)
        assert gpu.architecture == entry["architecture"]
        assert gpu.memory_gb == entry.get("memory_gb")
        assert gpu.mig_capable == entry["mig_capable"]
        assert list(gpu.product_labels) == entry.get("gpu_product_labels", [])
        assert list(gpu.nvml_names) == entry.get("nvml_names", [])
        assert list(gpu.pci_device_ids) == entry["pci_device_ids"]
        assert gpu.compute_slices == entry.get("compute_slices_total")
        assert gpu.memory_slices == entry.get("memory_slices_total")
        assert gpu.max_gpu_instances == entry.get("max_gpu_instances")
        profile_facts = [
            {key: value for key, value in p.items() if key != "note"} for p in entry.get("mig_profiles", [])
        ]
        assert [_profile_facts(p) for p in gpu.profiles] == profile_facts
        assert list(gpu.all_balanced) == list(entry.get("mig_parted_all_balanced", {}).items())
        has_placement = bool(profile_facts) and all("placement_starts" in p for p in profile_facts)
        assert gpu.placement_verified == has_placement


def test_split_entries_share_or_divide_their_facts(facts: dict[str, dict[str, Any]]) -> None:
    a2_a16 = facts["A2 / A16"]
    assert sorted(_model("a2").product_labels + _model("a16").product_labels) == sorted(a2_a16["gpu_product_labels"])
    b300 = facts["B300 / GB300 (data from mig-parted only)"]
    assert sorted(_model("b300").pci_device_ids + _model("gb300").pci_device_ids) == sorted(b300["pci_device_ids"])


def test_product_labels_are_the_sanitised_nvml_names() -> None:
    """GPU feature discovery drops characters outside [A-Za-z0-9-_. ] and turns spaces into '-' (gpu-facts.yaml
    conventions.gpu_product_label): each label is the NVML name at the same position."""
    for gpu in GPUS:
        sanitised = ["-".join(re.sub(r"[^A-Za-z0-9\-_. ]", "", name).split()) for name in gpu.nvml_names]
        assert sanitised == list(gpu.product_labels), gpu.id


def test_ids_are_lowercase_and_unique() -> None:
    ids = [gpu.id for gpu in GPUS]
    assert len(set(ids)) == len(ids)
    assert all(gpu_id == gpu_id.lower() for gpu_id in ids)


def test_mig_models_have_consistent_geometry() -> None:
    for gpu in GPUS:
        if not gpu.mig_capable:
            assert (gpu.compute_slices, gpu.memory_slices, gpu.profiles, gpu.all_balanced) == (
                None,
                None,
                (),
                (),
            )
            continue
        assert gpu.compute_slices and gpu.memory_slices and gpu.profiles, gpu.id
        names = gpu.profile_names()
        assert len(set(names)) == len(names), gpu.id
        assert all(gpu.profile(name) is not None for name, _ in gpu.all_balanced), gpu.id
        for profile in gpu.profiles:
            assert profile.compute_slices <= gpu.compute_slices, profile
            assert profile.memory_slices <= gpu.memory_slices, profile
            if profile.placement_starts is not None:
                # place_layout relies on every placement lying inside the memory slices.
                assert profile.placement_size == profile.memory_slices, profile
                assert all(s + profile.memory_slices <= gpu.memory_slices for s in profile.placement_starts)


def test_profile_name_forms() -> None:
    cases = {
        "1g.10gb": ("nvidia.com/mig-1g.10gb", "1g.10gb", False),
        "1g.10gb+me": ("nvidia.com/mig-1g.10gb.me", "1g.10gbme", True),
        "1g.24gb+me.all": ("nvidia.com/mig-1g.24gb.me.all", "1g.24gbme.all", True),
        "1g.24gb-me": ("nvidia.com/mig-1g.24gb-me", "1g.24gb-me", False),
        "2g.48gb+gfx": ("nvidia.com/mig-2g.48gb.gfx", "2g.48gbgfx", False),
    }
    for name, expected in cases.items():
        profile = MigProfile(name, 1, 1, 1)
        assert (profile.resource_name, profile.label_suffix, profile.has_media_extensions) == expected


def test_profile_lookup_on_model() -> None:
    a100 = _model("a100-40gb")
    assert a100.profile("3g.20gb") == MigProfile("3g.20gb", 3, 4, 2, (0, 4), 4)
    assert a100.profile("3g.40gb") is None
    assert a100.profile_names()[:2] == ("1g.5gb", "1g.5gb+me")


def test_mps_limit_follows_architecture() -> None:
    assert {gpu.mps_max_replicas for gpu in GPUS} == {48}
    pascal = GpuModel("p100", "P100", "pascal", 16, False, ("Tesla-P100-PCIE-16GB",), ("0x15F810DE",))
    assert pascal.mps_max_replicas == 16
