"""Finding models by id, product label or NVML name, and suggestions for names that match nothing."""

from __future__ import annotations

import pytest

from gpustack_gen.catalog import GPUS, base_product, get_gpu, gpu_ids, suggest_gpus, suggest_profiles

PUBLIC_IDS = (
    "tesla-t4",
    "v100",
    "a10",
    "a10g",
    "a40",
    "a2",
    "a16",
    "l4",
    "l40",
    "l40s",
    "rtx-a6000",
    "rtx-6000-ada",
    "a30-24gb",
    "a100-40gb",
    "a100-80gb",
    "h100-80gb",
    "h100-nvl-94gb",
    "h100-96gb",
    "h200-141gb",
    "gh200-144gb",
    "b200-180gb",
    "gb200-186gb",
    "rtx-pro-6000-blackwell-96gb",
    "b300",
    "gb300",
)


def test_ids_are_the_public_list_in_catalog_order() -> None:
    assert gpu_ids() == PUBLIC_IDS


def test_every_id_and_label_resolves_to_its_own_model() -> None:
    for gpu in GPUS:
        for name in (
            gpu.id,
            gpu.id.upper(),
            *gpu.product_labels,
            *(label.lower() for label in gpu.product_labels),
        ):
            assert get_gpu(name) is gpu, name


@pytest.mark.parametrize(
    ("name", "gpu_id"),
    [
        ("Tesla-T4", "tesla-t4"),
        ("NVIDIA-A100-SXM4-40GB", "a100-40gb"),
        ("nvidia-h100-80gb-hbm3", "h100-80gb"),
        ("  A100-40GB ", "a100-40gb"),
        # suffixes the device plugin's labeler appends
        ("Tesla-T4-SHARED", "tesla-t4"),
        ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "a100-40gb"),
        ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gbme", "a100-40gb"),
        ("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb-SHARED", "h100-80gb"),
        ("nvidia-rtx-pro-6000-blackwell-server-edition-mig-1g.24gb-me", "rtx-pro-6000-blackwell-96gb"),
        # NVML names, sanitised the way the labeler does it
        ("NVIDIA A100 80GB PCIe", "a100-80gb"),
        ("Tesla V100S-PCIE-32GB", "v100"),
        ("NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"),
        # older drivers: no 'NVIDIA ' prefix in the name
        ("A100-SXM4-40GB", "a100-40gb"),
        ("H200-NVL", "h200-141gb"),
    ],
)
def test_get_gpu_accepts_labels_names_and_suffixes(name: str, gpu_id: str) -> None:
    gpu = get_gpu(name)
    assert gpu is not None and gpu.id == gpu_id


@pytest.mark.parametrize("name", ["", "a100", "NVIDIA-A100", "nvidia-", "rtx-pro-6000", "t4-MIG"])
def test_get_gpu_rejects_ambiguous_or_unknown_names(name: str) -> None:
    assert get_gpu(name) is None


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a100", ["a100-40gb", "a100-80gb"]),
        ("H100", ["h100-80gb", "h100-nvl-94gb", "h100-96gb"]),
        ("t4", ["tesla-t4"]),
        ("NVIDIA-A100-SXM4-40G", ["a100-40gb"]),
        ("l40x", ["l40", "l40s"]),
        ("b300x", ["b300"]),
    ],
)
def test_suggest_gpus_puts_the_likely_model_first(name: str, expected: list[str]) -> None:
    suggestions = suggest_gpus(name)
    assert suggestions[: len(expected)] == expected
    assert len(suggestions) <= 3
    assert set(suggestions) <= set(gpu_ids())


def test_suggest_gpus_limit_and_no_match() -> None:
    assert suggest_gpus("h100", limit=1) == ["h100-80gb"]
    assert suggest_gpus("zzzz") == []


@pytest.mark.parametrize(
    ("gpu_id", "name", "expected"),
    [
        # the 40GB name of the 80GB model's profile: same compute slices first
        ("a100-80gb", "1g.5gb", ["1g.10gb", "1g.20gb", "1g.10gb+me"]),
        ("a100-40gb", "3g.40gb", ["3g.20gb"]),
        ("a100-40gb", "2g10gb", ["2g.10gb"]),
        ("a100-40gb", "1g.5gb.me", ["1g.5gb+me"]),
        # '+me' is closer to '+me.all' than to '-me' (no media engines), despite the spelling
        ("rtx-pro-6000-blackwell-96gb", "2g.48gb+me", ["2g.48gb+me.all"]),
        ("rtx-pro-6000-blackwell-96gb", "2g.48gb-m", ["2g.48gb-me"]),
    ],
)
def test_suggest_profiles(gpu_id: str, name: str, expected: list[str]) -> None:
    gpu = get_gpu(gpu_id)
    assert gpu is not None
    assert suggest_profiles(gpu, name)[: len(expected)] == expected


def test_suggest_profiles_limit_and_no_match() -> None:
    gpu = get_gpu("a30-24gb")
    assert gpu is not None
    assert len(suggest_profiles(gpu, "1g.6gb", limit=1)) == 1
    assert suggest_profiles(gpu, "zzz") == []
    t4 = get_gpu("tesla-t4")
    assert t4 is not None
    assert suggest_profiles(t4, "1g.5gb") == []


@pytest.mark.parametrize(
    ("product", "base"),
    [
        ("Tesla-T4-SHARED", "Tesla-T4"),
        ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "NVIDIA-A100-SXM4-40GB"),
        ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED", "NVIDIA-A100-SXM4-40GB"),
        ("NVIDIA-H100-80GB-HBM3", "NVIDIA-H100-80GB-HBM3"),
    ],
)
def test_product_label_suffixes_are_dropped_with_their_case_kept(product: str, base: str) -> None:
    """The device plugin's labeler appends -MIG-<profile> and -SHARED (k8s-device-plugin internal/lm/resource.go)."""
    assert base_product(product) == base
