"""The GPU Operator's built-in mig-parted configs (``default-mig-parted-config``) as they apply to one model.

GPU Operator v26.7.0 ships mig-parted v0.15.0's ``config-default.yaml``. Its rule, which
``tests/catalog/test_mig_builtin_conformance.py`` checks entry by entry:

- ``all-disabled`` on every GPU; ``all-enabled`` (MIG on, no instances) on MIG GPUs;
- ``all-balanced``: the model's balanced layout, behind a device-filter of the model's PCI ids;
- ``all-<profile>`` for every profile, '+' written as '.' (``all-1g.10gb.me``, ``all-1g.24gb.me.all``;
  ``-me`` stays: ``all-1g.24gb-me``), with the profile's max instances.

Where one profile name means different sizes on different models, upstream adds a device-filter instead of
a shared entry (``_FILTERED_CONFIGS``).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpustack_gen.catalog.models import GpuModel

ALL_DISABLED = "all-disabled"
ALL_ENABLED = "all-enabled"
ALL_BALANCED = "all-balanced"

# The union of the device-filters of the all-<profile> configs that have one.
_FILTERED_CONFIGS: dict[str, frozenset[str]] = {
    # 1g.10gb is the double-memory 1g on A100-40GB/A800-40GB (4) and the single 1g on 80 GB A100/H100 (7).
    "all-1g.10gb": frozenset(
        {
            "0x233010DE",
            "0x233110DE",
            "0x232210DE",
            "0x20B210DE",
            "0x20B510DE",
            "0x20F310DE",
            "0x20F510DE",
            "0x232410DE",
            "0x20B010DE",
            "0x20B110DE",
            "0x20F110DE",
            "0x20F610DE",
        }
    ),
    # 1g.35gb is the double-memory 1g on H200 (4) and the single 1g on GB300 (7). Upstream lists only the
    # H200 SXM id, so H200 NVL (0x233B10DE) GPUs are left untouched by this config.
    "all-1g.35gb": frozenset({"0x233510DE", "0x31C210DE"}),
}


@dataclass(frozen=True, slots=True)
class MigConfigEntry:
    """What one built-in config does to this model's GPUs.

    ``device_filter`` is None when the upstream entry has no filter (``devices: all``); otherwise it holds the
    model's PCI ids that the filter lists; GPUs of the model with other ids are not changed by the config.
    """

    mig_enabled: bool
    mig_devices: tuple[tuple[str, int], ...]
    device_filter: tuple[str, ...] | None = None


def config_name(profile_name: str) -> str:
    """The built-in config name for a profile: ``all-1g.10gb+me`` is written ``all-1g.10gb.me``."""
    return "all-" + profile_name.replace("+", ".")


def builtin_mig_config(gpu: GpuModel, name: str) -> MigConfigEntry | None:
    """The built-in config ``name`` as it applies to ``gpu``; None when it does not exist for that model."""
    if name == ALL_DISABLED:
        return MigConfigEntry(mig_enabled=False, mig_devices=())
    if not gpu.mig_capable:
        return None
    if name == ALL_ENABLED:
        return MigConfigEntry(mig_enabled=True, mig_devices=())
    if name == ALL_BALANCED:
        return MigConfigEntry(mig_enabled=True, mig_devices=gpu.all_balanced, device_filter=gpu.pci_device_ids)
    for profile in gpu.profiles:
        if config_name(profile.name) != name:
            continue
        device_filter = None
        if name in _FILTERED_CONFIGS:
            device_filter = tuple(i for i in gpu.pci_device_ids if i in _FILTERED_CONFIGS[name])
            if not device_filter:
                return None
        return MigConfigEntry(
            mig_enabled=True,
            mig_devices=((profile.name, profile.max_instances),),
            device_filter=device_filter,
        )
    return None


def builtin_mig_config_names(gpu: GpuModel) -> tuple[str, ...]:
    """Every built-in config name that exists for ``gpu``: the three fixed ones, then one per profile."""
    candidates = [ALL_DISABLED, ALL_ENABLED, ALL_BALANCED, *(config_name(p.name) for p in gpu.profiles)]
    return tuple(name for name in candidates if builtin_mig_config(gpu, name) is not None)
