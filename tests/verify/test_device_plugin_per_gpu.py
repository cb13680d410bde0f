"""What verify reads one GPU advertises under a standalone chart's config, as the plugin (and import) read it."""

from __future__ import annotations

from gpustack_gen.verify.backends.device_plugin import _per_gpu


def test_mps_wins_over_time_slicing_and_a_bare_resource_name_is_nvidia_coms() -> None:
    both = {
        "sharing": {
            "timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 8}]},
            "mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]},
        }
    }
    assert _per_gpu(both) == {"nvidia.com/gpu": 2}
    bare = {"sharing": {"timeSlicing": {"renameByDefault": True, "resources": [{"name": "gpu", "replicas": 4}]}}}
    assert _per_gpu(bare) == {"nvidia.com/gpu.shared": 4}
