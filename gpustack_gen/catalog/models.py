"""Catalog record types: a GPU model and its MIG GPU-instance profiles."""

from __future__ import annotations

from dataclasses import dataclass

# MPS client limit per GPU (GPU Operator MPS docs): 16 before Volta, 48 from Volta on.
_PRE_VOLTA_ARCHITECTURES = frozenset({"kepler", "maxwell", "pascal"})
_MPS_MAX_REPLICAS_PRE_VOLTA = 16
_MPS_MAX_REPLICAS = 48


def is_media_profile(name: str) -> bool:
    """True when a profile name carries a ``+me`` family attribute (``+me``, ``+me.all``)."""
    _, plus, attrs = name.partition("+")
    return bool(plus) and any(attr.startswith("me") for attr in attrs.split(","))


@dataclass(frozen=True, slots=True)
class MigProfile:
    """One MIG GPU-instance profile of one model, e.g. ``1g.10gb+me``.

    ``placement_starts``/``placement_size`` are the NVML placements on the memory-slice axis
    (``nvidia-smi mig -lgipp``); both are None when no citable placement table exists for the model.
    """

    name: str
    compute_slices: int
    memory_slices: int
    max_instances: int
    placement_starts: tuple[int, ...] | None = None
    placement_size: int | None = None

    @property
    def resource_name(self) -> str:
        """The mixed-strategy resource, ``nvidia.com/mig-<profile>`` with '+' turned into '.'."""
        return "nvidia.com/mig-" + self.name.replace("+", ".")

    @property
    def label_suffix(self) -> str:
        """The profile as the single strategy writes it into ``nvidia.com/gpu.product`` ('+' removed)."""
        return self.name.replace("+", "")

    @property
    def has_media_extensions(self) -> bool:
        """True for a ``+me`` family profile (``+me``, ``+me.all``), which takes the GPU's only media engines.

        ``-me`` means "without media engines" and ``+gfx`` is graphics, so neither counts.
        """
        return is_media_profile(self.name)


@dataclass(frozen=True, slots=True)
class GpuModel:
    """A GPU model as the Operator sees it: product labels, PCI ids and, if MIG-capable, its MIG geometry."""

    id: str
    name: str
    architecture: str
    memory_gb: int | None
    mig_capable: bool
    product_labels: tuple[str, ...]
    pci_device_ids: tuple[str, ...]
    compute_slices: int | None = None
    memory_slices: int | None = None
    max_gpu_instances: int | None = None
    profiles: tuple[MigProfile, ...] = ()
    all_balanced: tuple[tuple[str, int], ...] = ()
    # The NVML device names (``NVIDIA A100-SXM4-40GB``), which the DRA driver publishes as ``productName``;
    # the product labels are these names sanitised by GPU feature discovery.
    nvml_names: tuple[str, ...] = ()

    @property
    def placement_verified(self) -> bool:
        """True when every profile has a citable placement table, so layouts can be placed exactly."""
        return bool(self.profiles) and all(p.placement_starts is not None for p in self.profiles)

    @property
    def mps_max_replicas(self) -> int:
        """The most MPS clients one GPU of this model accepts."""
        if self.architecture in _PRE_VOLTA_ARCHITECTURES:
            return _MPS_MAX_REPLICAS_PRE_VOLTA
        return _MPS_MAX_REPLICAS

    def profile(self, name: str) -> MigProfile | None:
        """The profile with exactly this name, or None."""
        for candidate in self.profiles:
            if candidate.name == name:
                return candidate
        return None

    def profile_names(self) -> tuple[str, ...]:
        """Profile names in catalog order."""
        return tuple(p.name for p in self.profiles)
