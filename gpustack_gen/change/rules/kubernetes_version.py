"""The cluster's Kubernetes version changes: the upgrade itself is done outside gpustack-gen, but it is a change.

* On CRI-O with CDI off, containers get their GPUs from the legacy OCI hook. Old host packages (toolkit up to
  v1.13.x) left ``oci-nvidia-hook.json`` in ``/usr/share/containers/oci/hooks.d``, running
  ``nvidia-container-toolkit prestart`` for every container (nvidia-container-toolkit@v1.10.0
  ``oci-nvidia-hook.json``; the RPM stopped shipping it in v1.14.0, commit 65f6f468). A node upgrade that
  reinstalls the runtime brings the failure ``error executing hook /usr/bin/nvidia-container-toolkit`` with it
  (../shared/research/real-world.md §10). With CDI on, the Operator's toolkit configures CRI-O with a runtime
  handler (``CRIO_CONFIG_MODE=config``, gpu-operator@v25.3.3 ``controllers/object_controls.go:1260``) and the
  hooks directory is no longer the path GPUs take. So the plan refuses the upgrade until CDI is on, as a change
  of its own, rolled out first. The standalone device plugin chart on CRI-O has the same path (its pod and the
  GPU containers ask for devices in ``NVIDIA_VISIBLE_DEVICES`` for the host's hook; standalone-plugin.md §8): the
  move to the GPU Operator with CDI comes first.
* Version skew (kubernetes.io/releases/version-skew-policy): the kubelet may be up to three minor versions older
  than the API server (two before 1.28), never newer, and control planes upgrade one minor version at a time.
  Node pools upgrade after the control plane; each node's upgrade drains it (a change of the node, not of the
  GPU Operator's settings), so the GPU pools' drains follow docs/guides/rollout-assumptions.md.
* HAMi's chart takes its kube-scheduler image tag from ``.Capabilities.KubeVersion.Version`` (hami@v2.10.0
  ``charts/hami/values.yaml:86,94-97``, ``templates/_helpers.tpl:100-118``) and the scheduler config API from its
  minor version (``templates/scheduler/configmap.yaml:1-18``); Helm reads the live cluster's version on install
  and upgrade (helm@v3.21.4 ``pkg/action/install.go:272-277``). So the Kubernetes upgrade changes nothing until
  the release is upgraded again (../shared/research/real-world.md §12).
"""

from __future__ import annotations

from collections.abc import Iterator

from ...compile.backends import backend_of
from ...model.backends.hami import NAME as HAMI
from .. import steps
from ..context import ClusterChange
from ..model import Finding, Level, Outcome

ID = "kubernetes-version"
LEVEL = Level.NONE


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if change.old is None or change.new is None:
        return
    old, new = change.both
    if old.kubernetes == new.kubernetes:
        return
    what = f"Kubernetes {old.kubernetes} -> {new.kubernetes}"
    if new.container_runtime == "cri-o" and not backend_of(new).INSTALLS_OPERATOR:
        yield Outcome(
            Finding(
                ID,
                Level.ERROR,
                f"{what} on CRI-O with the hosts' own toolkit (backend {new.backend}): the plugin and every GPU "
                "container get their GPUs through the host's OCI hook, and a node upgrade that reinstalls the runtime "
                "brings 'error executing hook /usr/bin/nvidia-container-toolkit', then 'could not load NVML library': "
                "the nodes advertise nvidia.com/gpu: 0, as in the write-up",
                None,
                tuple(p.name for p in new.pools),
                hint="move to the GPU Operator with CDI first, as a change of its own (backend: gpu-operator, "
                "operator.cdi {enabled: true, default: true}, operator.driver.enabled: false where the hosts keep "
                f"their driver; Kubernetes kept at {old.kubernetes}); roll it out, then upgrade Kubernetes",
            )
        )
        return
    if new.container_runtime == "cri-o" and not new.operator.cdi_enabled:
        yield Outcome(
            Finding(
                ID,
                Level.ERROR,
                f"{what} on CRI-O with CDI off: GPUs reach containers through the legacy OCI hook, and a node upgrade "
                "that reinstalls the runtime brings back 'error executing hook /usr/bin/nvidia-container-toolkit' "
                "(and 'could not load NVML library') on every GPU container",
                None,
                tuple(p.name for p in new.pools),
                hint="turn CDI on first, as a change of its own (operator.cdi.enabled: true, with the Kubernetes "
                f"version kept at {old.kubernetes}); roll it out, then upgrade Kubernetes",
            )
        )
        return
    (old_major, old_minor), (new_major, new_minor) = _minor(old.kubernetes), _minor(new.kubernetes)
    skip = (new_major, new_minor) > (old_major, old_minor + 1)
    rerender = (
        tuple(
            steps.release(
                change,
                new,
                release,
                f"after the Kubernetes upgrade: HAMi's chart renders its kube-scheduler for {new.kubernetes}",
                ID,
            )
            for release in backend_of(new).releases(new)
        )
        if change.on(HAMI)
        else ()
    )
    yield Outcome(
        Finding(
            ID,
            Level.RESTART if rerender else Level.NONE,
            f"{what}: upgrade the control plane, then the node pools (the kubelet may lag the API server by up to "
            "three minor versions, never lead it); each node's upgrade drains it"
            + ("; the control plane upgrades one minor version at a time" if skip else "")
            + ("; then upgrade the HAMi release, whose scheduler follows the cluster's version" if rerender else ""),
        ),
        rerender,
    )
