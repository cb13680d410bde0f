"""Backend device-plugin: the node labels the standalone chart's DaemonSets need to land where the pools say."""

from __future__ import annotations

from gpustack_gen.compile.backends import device_plugin
from gpustack_gen.model import load_fleet

FLEET = """
apiVersion: gpustack-gen/v1alpha1
kind: Fleet
clusters:
  - name: prod
    kubernetes: "1.29.15"
    backend: device-plugin
    nodePools:
      - {name: mps, gpu: tesla-t4, nodes: 1, gpusPerNode: 1, nodeSelector: {pool: mps},
         sharing: {strategy: mps, replicas: 4}}
      - {name: sliced, gpu: tesla-t4, nodes: 1, gpusPerNode: 1, nodeSelector: {pool: sliced},
         sharing: {strategy: time-slicing, replicas: 4}}
"""


def test_an_mps_pool_is_labelled_for_the_mps_daemon_which_no_gfd_labels() -> None:
    # The chart's MPS daemon selects nvidia.com/mps.capable=true (daemonset-mps-control-daemon.yml:201-203); with
    # GFD off nothing else sets it, and the plugin waits for the daemon before it registers.
    labels = device_plugin.pool_labels(load_fleet(FLEET, name="fleet.yaml").clusters[0])
    assert labels["mps"]["nvidia.com/mps.capable"] == "true"
    assert "nvidia.com/mps.capable" not in labels["sliced"]
