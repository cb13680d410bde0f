"""Find catalog models by id or ``nvidia.com/gpu.product`` label, and suggest names for typos."""

from __future__ import annotations

import re

from gpustack_gen.catalog.gpus import GPUS
from gpustack_gen.catalog.models import GpuModel, is_media_profile
from gpustack_gen.suggest import CUTOFF, similarity, suggest

# The node label GPU feature discovery sets to a GPU's product name; catalog models list theirs.
PRODUCT_LABEL = "nvidia.com/gpu.product"
# What the device plugin's labeler appends to the product label: '-MIG-<profile>' under the single strategy,
# then '-SHARED' for a shared resource that is not renamed (k8s-device-plugin internal/lm/resource.go).
_SHARED_SUFFIX = re.compile(r"-shared$", re.IGNORECASE)
_MIG_SUFFIX = re.compile(r"-mig-.*$", re.IGNORECASE)
# The labeler's sanitising rule, so NVML names ("NVIDIA A100-SXM4-40GB") resolve too.
_OUTSIDE_LABEL_CHARSET = re.compile(r"[^a-z0-9\-_. ]")
_WHITESPACE = re.compile(r"\s+")
# Older drivers reported NVML names without the vendor prefix (label "A100-SXM4-40GB").
_VENDOR_PREFIX = "nvidia-"
_COMPUTE_PREFIX = re.compile(r"^(\d+)g")


def base_product(label: str) -> str:
    """``Tesla-T4-SHARED`` -> ``Tesla-T4``; ``NVIDIA-A100-SXM4-40GB-MIG-1g.5gb`` -> ``NVIDIA-A100-SXM4-40GB``."""
    return _MIG_SUFFIX.sub("", _SHARED_SUFFIX.sub("", label.strip()))


def _normalise(name: str) -> str:
    return base_product(_WHITESPACE.sub("-", _OUTSIDE_LABEL_CHARSET.sub("", name.strip().lower())))


def _build_index() -> dict[str, GpuModel]:
    index: dict[str, GpuModel] = {}
    for gpu in GPUS:
        index[gpu.id] = gpu
        for label in gpu.product_labels:
            key = label.lower()
            index[key] = gpu
            index.setdefault(key.removeprefix(_VENDOR_PREFIX), gpu)
    return index


_INDEX = _build_index()


def get_gpu(name: str) -> GpuModel | None:
    """The model for a catalog id, a ``nvidia.com/gpu.product`` label or an NVML name; None if unknown.

    Matching ignores case, and a label's '-MIG-<profile>' and '-SHARED' suffixes are dropped first.
    """
    return _INDEX.get(_normalise(name))


def gpu_ids() -> tuple[str, ...]:
    """Every catalog id, in catalog order."""
    return tuple(gpu.id for gpu in GPUS)


def suggest_gpus(name: str, limit: int = 3) -> list[str]:
    """Catalog ids whose id or product label is close to ``name``, best first."""
    query = _normalise(name)
    # A family name such as "h100" or "t4" is too short for difflib against "nvidia-h100-nvl", so ids and
    # labels that contain it as whole dash-separated parts come first.
    contains = [key for key in _INDEX if query and f"-{query}-" in f"-{key}-"]
    matches = suggest(query, _INDEX, n=len(_INDEX))
    ids: list[str] = []
    for key in contains + matches:
        gpu_id = _INDEX[key].id
        if gpu_id not in ids:
            ids.append(gpu_id)
    return ids[:limit]


def suggest_profiles(gpu: GpuModel, name: str, limit: int = 3) -> list[str]:
    """The model's profile names closest to ``name``.

    Same compute slices first, then the same media-engine kind (so '+me' does not suggest '-me', which means
    the opposite), then by similarity.
    """
    wanted = name.strip().lower()
    compute = _COMPUTE_PREFIX.match(wanted)
    # Users also write the resource / config-name form, where '+' became '.' ("1g.10gb.me").
    wants_media = is_media_profile(wanted.replace("gb.", "gb+", 1))
    ranked: list[tuple[bool, bool, float, str]] = []
    for profile in gpu.profiles:
        same_compute = compute is not None and int(compute.group(1)) == profile.compute_slices
        ratio = max(similarity(wanted, form) for form in (profile.name, profile.name.replace("+", ".")))
        if same_compute or ratio >= CUTOFF:
            ranked.append((not same_compute, profile.has_media_extensions != wants_media, -ratio, profile.name))
    return [profile_name for *_, profile_name in sorted(ranked)[:limit]]
