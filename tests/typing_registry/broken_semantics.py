"""A model backend with one wrong signature, deliberately: mypy must refuse it as a row of the model registry.

Everything but ``resolve_sharing`` is the GPU Operator backend's own; ``resolve_sharing`` forgets the options it
is given.
"""

from __future__ import annotations

from gpustack_gen.model.backends import gpu_operator as real
from gpustack_gen.model.fleet import SharingOptions

DEVICE_PLUGIN_LIMITS = real.DEVICE_PLUGIN_LIMITS
EXTENDED_RESOURCES = real.EXTENDED_RESOURCES
NAME = real.NAME
NODE_LABELLED_CONFIGS = real.NODE_LABELLED_CONFIGS
OPTIONS = real.OPTIONS
OPTION_REASONS = real.OPTION_REASONS
REDEPLOYS_ON_MOVE = real.REDEPLOYS_ON_MOVE
RETIRED_REFUSALS = real.RETIRED_REFUSALS
SHARING_EXAMPLES = real.SHARING_EXAMPLES
SHARING_OPTIONS = real.SHARING_OPTIONS
STRATEGIES = real.STRATEGIES
STRATEGY_SUMMARIES = real.STRATEGY_SUMMARIES
SUMMARY = real.SUMMARY
WORKLOAD_OPTIONS = real.WORKLOAD_OPTIONS
allocatable_per_gpu = real.allocatable_per_gpu
capacity_hint = real.capacity_hint
RANGE_HINTS = real.RANGE_HINTS
check = real.check
check_pool = real.check_pool
check_sharing = real.check_sharing
check_workload = real.check_workload
device_plugin_version = real.device_plugin_version
isolation = real.isolation
pods_share_request = real.pods_share_request
resolve_options = real.resolve_options
resolve_pool = real.resolve_pool
resolve_workload = real.resolve_workload
resources_per_gpu = real.resources_per_gpu
workload_limits = real.workload_limits
workload_request = real.workload_request


def resolve_sharing(strategy: str) -> SharingOptions:
    return SharingOptions()
