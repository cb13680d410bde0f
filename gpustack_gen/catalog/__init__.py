"""The GPU catalog: models, MIG profiles and placement rules, plus the Operator's built-in MIG configs."""

from gpustack_gen.catalog.gpus import GPUS
from gpustack_gen.catalog.lookup import PRODUCT_LABEL, base_product, get_gpu, gpu_ids, suggest_gpus, suggest_profiles
from gpustack_gen.catalog.memory import gpu_memory_mib
from gpustack_gen.catalog.mig_builtin import ALL_DISABLED, MigConfigEntry, builtin_mig_config, builtin_mig_config_names
from gpustack_gen.catalog.models import GpuModel, MigProfile
from gpustack_gen.catalog.placement import Placement, describe, place_layout

__all__ = [
    "ALL_DISABLED",
    "GPUS",
    "PRODUCT_LABEL",
    "GpuModel",
    "MigConfigEntry",
    "MigProfile",
    "Placement",
    "base_product",
    "builtin_mig_config",
    "builtin_mig_config_names",
    "describe",
    "get_gpu",
    "gpu_ids",
    "gpu_memory_mib",
    "place_layout",
    "suggest_gpus",
    "suggest_profiles",
]
