"""GPU memory per model, for backends that share a GPU by memory (HAMi).

``gpu-facts.yaml`` gives ``memory_gb`` for the MIG-capable models (``GpuModel.memory_gb``). For the others
the nominal size comes from NVIDIA's product briefs and datasheets, per GPU (an A16 board carries four
GPUs of 16 GB each). It is the nominal size: what NVML reports, and HAMi registers, can be a little less
(ECC on, driver reservations), so a check against it is a necessary condition, not a guarantee.
"""

from __future__ import annotations

from .models import GpuModel

MIB_PER_GB = 1024

# Catalog id -> nominal memory per GPU in GB, for models gpu-facts.yaml gives none for.
# V100 is left out: its 16 GB and 32 GB variants share one catalog id. B300 and GB300 (data from
# mig-parted only) are left out too.
NOMINAL_MEMORY_GB: dict[str, int] = {
    "tesla-t4": 16,  # NVIDIA T4 product brief PB-09256: "The T4 has 16 GB GDDR6 memory"
    "a2": 16,  # NVIDIA A2 datasheet: 16 GB GDDR6
    "a16": 16,  # NVIDIA A16 product brief PB-10518: 4 GPUs x 16 GB GDDR6
    "a10": 24,  # NVIDIA A10 datasheet: 24 GB GDDR6
    "a10g": 24,  # AWS G5 instances: NVIDIA A10G with 24 GB
    "l4": 24,  # NVIDIA L4 datasheet: 24 GB GDDR6
    "a40": 48,  # NVIDIA A40 datasheet: 48 GB GDDR6
    "l40": 48,  # NVIDIA L40 datasheet: 48 GB GDDR6
    "l40s": 48,  # NVIDIA L40S datasheet: 48 GB GDDR6
    "rtx-a6000": 48,  # NVIDIA RTX A6000 datasheet: 48 GB GDDR6
    "rtx-6000-ada": 48,  # NVIDIA RTX 6000 Ada datasheet: 48 GB GDDR6
}


def gpu_memory_mib(gpu: GpuModel) -> int | None:
    """Nominal memory of one GPU of ``gpu`` in MiB; None where the catalog does not know it."""
    gb = gpu.memory_gb if gpu.memory_gb is not None else NOMINAL_MEMORY_GB.get(gpu.id)
    return None if gb is None else gb * MIB_PER_GB
