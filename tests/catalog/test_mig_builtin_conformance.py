"""``builtin_mig_config`` reproduces the Operator's default mig-parted configs for every model of ours."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from gpustack_gen.catalog import GPUS, GpuModel, MigProfile, builtin_mig_config, builtin_mig_config_names

DEFAULT_CONFIGS = {
    "mig-parted v0.15.0 config-default": ("mig-parted-v0.15.0-config-default.yaml", None),
    "GPU Operator v26.7.0 ConfigMap": (
        "gpu-operator-v26.7.0-default-mig-parted-config-configmap.yaml",
        "config.yaml",
    ),
}


def _load(upstream: Path, source: str) -> dict[str, list[dict[str, Any]]]:
    filename, configmap_key = DEFAULT_CONFIGS[source]
    yaml = YAML(typ="safe")
    document = yaml.load((upstream / "mig-parted" / filename).read_text(encoding="utf-8"))
    if configmap_key is not None:
        document = yaml.load(document["data"][configmap_key])
    configs: dict[str, list[dict[str, Any]]] = document["mig-configs"]
    return configs


def _applies_to(entry: dict[str, Any], gpu: GpuModel) -> tuple[bool, tuple[str, ...] | None]:
    """Whether the entry configures this model, and which of its PCI ids the filter lists (None: no filter).

    An unfiltered entry that enables MIG applies to the MIG models that have every profile it names.
    """
    device_filter = entry.get("device-filter")
    if device_filter is None:
        if not entry["mig-enabled"]:
            return True, None
        names = entry["mig-devices"]
        return gpu.mig_capable and all(gpu.profile(name) is not None for name in names), None
    listed = {device_filter} if isinstance(device_filter, str) else set(device_filter)
    matched = tuple(i for i in gpu.pci_device_ids if i in listed)
    return bool(matched), matched


@pytest.mark.parametrize("source", sorted(DEFAULT_CONFIGS))
def test_builtin_configs_match_upstream(upstream: Path, source: str) -> None:
    configs = _load(upstream, source)
    mismatches: list[str] = []
    upstream_names: dict[str, set[str]] = {gpu.id: set() for gpu in GPUS}
    for name, entries in configs.items():
        for entry in entries:
            assert entry["devices"] == "all", (name, entry)
            for gpu in GPUS:
                applies, device_filter = _applies_to(entry, gpu)
                if not applies:
                    continue
                upstream_names[gpu.id].add(name)
                expected = (entry["mig-enabled"], dict(entry.get("mig-devices") or {}), device_filter)
                ours = builtin_mig_config(gpu, name)
                got = None if ours is None else (ours.mig_enabled, dict(ours.mig_devices), ours.device_filter)
                if got != expected:
                    mismatches.append(f"{name} on {gpu.id}: upstream {expected}, ours {got}")
    for gpu in GPUS:
        extra = set(builtin_mig_config_names(gpu)) - upstream_names[gpu.id]
        missing = upstream_names[gpu.id] - set(builtin_mig_config_names(gpu))
        if extra or missing:
            mismatches.append(f"{gpu.id}: names not upstream {sorted(extra)}, upstream names missing {sorted(missing)}")
    assert not mismatches, "\n".join(mismatches)


def test_every_mig_model_has_a_config_per_profile() -> None:
    for gpu in GPUS:
        names = builtin_mig_config_names(gpu)
        if not gpu.mig_capable:
            assert names == ("all-disabled",)
            continue
        assert names[:3] == ("all-disabled", "all-enabled", "all-balanced")
        assert len(names) == 3 + len(gpu.profiles)


def test_name_that_does_not_exist_for_the_model() -> None:
    a30 = next(gpu for gpu in GPUS if gpu.id == "a30-24gb")
    assert builtin_mig_config(a30, "all-1g.5gb") is None
    assert builtin_mig_config(a30, "all-1g.6gb+me") is None  # the config name uses '.', never '+'
    assert builtin_mig_config(a30, "all-1g.6gb.me") is not None


def test_filtered_config_skips_a_model_outside_the_filter() -> None:
    # A hypothetical model whose 1g.35gb is not on the all-1g.35gb device-filter is left alone by upstream.
    other = GpuModel(
        "x",
        "X",
        "hopper",
        141,
        True,
        ("NVIDIA-X",),
        ("0x000110DE",),
        7,
        8,
        7,
        (MigProfile("1g.35gb", 1, 2, 4),),
    )
    assert builtin_mig_config(other, "all-1g.35gb") is None
