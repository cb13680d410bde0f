"""Why a GPU pod's container fails, read from what the kubelet said: its waiting and terminated messages and the
pod's events, matched against the failures of NVIDIA's container stack, most telling first.

- ``error executing hook /usr/bin/nvidia-container-toolkit`` (or ``/usr/bin/nvidia-container-runtime-hook``)
  names the host's own OCI hook, not the Operator's: host packages up to v1.10.x shipped ``oci-nvidia-hook.json``
  running ``/usr/bin/nvidia-container-toolkit prestart`` for every container (``when.always``), v1.11.0-v1.13.x
  point it at ``/usr/bin/nvidia-container-runtime-hook``, and the RPM put it in
  ``/usr/share/containers/oci/hooks.d``; from v1.14.0 it is no longer installed, but upgrades leave it behind
  (``NVIDIA/nvidia-container-toolkit@v1.10.0 oci-nvidia-hook.json``; commits ``1d81db76``, ``65f6f468``). The
  Operator's toolkit writes its hook as ``/usr/local/nvidia/toolkit/nvidia-container-runtime-hook``
  (``@v1.17.8 tools/container/runtime/crio/crio.go:35-42``).
- ``could not load NVML library`` / ``libnvidia-ml.so``: the container got no driver.
- ``specified config X does not exist``: the config-manager's key is not in the ConfigMap
  (``NVIDIA/k8s-device-plugin@v0.17.4 cmd/config-manager/main.go:351-354``).

A container that never started has no logs (``kubectl logs`` says only that it is waiting to start): the command
that shows its message is ``kubectl describe pod``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..emit.header import _one_line
from ..k8s_state import ContainerState, Event, Pod
from ..model.fleet import Cluster
from . import commands

# What a waiting message says at most in a hint: enough to recognise it, no more.
_EXCERPT = 160
HOST_HOOK_DIR_PATHS = ("/usr/share/containers/oci/hooks.d", "/etc/containers/oci/hooks.d")  # CRI-O's hooks_dir
HOST_HOOK_DIRS = " or ".join(HOST_HOOK_DIR_PATHS)


@dataclass(frozen=True)
class Sign:
    """One failure of the container stack, as the kubelet's messages show it."""

    name: str  # host-hook, operator-hook, nvml, missing-config-key
    pattern: re.Pattern[str]
    cause: Callable[[re.Match[str], str], str]  # (the match, the container runtime) -> the cause in words


def _host_hook(match: re.Match[str], runtime: str) -> str:
    where = f"in CRI-O's hooks dir ({HOST_HOOK_DIRS})" if runtime == "cri-o" else "on the host"
    return (
        f"the host's own OCI hook {match.group(1)} fails, not the Operator's toolkit: an oci-nvidia-hook.json {where} "
        "left by the host's nvidia-container-toolkit package (up to v1.13.x) runs it for every container; remove that "
        "file (or the host package) on the node, the Operator's toolkit brings its own"
    )


def _operator_hook(match: re.Match[str], runtime: str) -> str:
    return f"the toolkit's OCI hook {match.group(1)} fails: the toolkit pod's log on the node says why"


def _nvml(match: re.Match[str], runtime: str) -> str:
    return "NVML not found: the container gets no driver from the runtime"


def _missing_key(match: re.Match[str], runtime: str) -> str:
    return f"key {match.group(1)} is missing from the device plugin's ConfigMap: the config-manager exits"


SIGNS = (
    Sign("host-hook", re.compile(r"error executing hook \S*?(/usr/bin/nvidia-container-(?:toolkit|runtime-hook))\b"), _host_hook),
    Sign("operator-hook", re.compile(r"error executing hook \S*?(/\S*nvidia-container-runtime-hook)\b"), _operator_hook),
    Sign("nvml", re.compile(r"could not load NVML|libnvidia-ml\.so|failed to initiali[sz]e NVML", re.I), _nvml),
    Sign("missing-config-key", re.compile(r"specified config ['\"]?([^\s'\"]+)['\"]? does not exist"), _missing_key),
)  # fmt: skip


@dataclass(frozen=True)
class Diagnosis:
    sign: str  # the Sign's name
    cause: str  # the cause, with what the kubelet said
    quote: str  # the message it was read from, cut short and made printable


def said(container: ContainerState, events: tuple[Event, ...]) -> tuple[str, ...]:
    """What the kubelet said of the container (its messages), then what the pod's warning events say."""
    return (*container.messages, *(e.message for e in events if e.message and e.type != "Normal"))


def diagnose(container: ContainerState, events: tuple[Event, ...], runtime: str) -> Diagnosis | None:
    """The most telling failure the messages show (:data:`SIGNS` order), or None when they show none."""
    texts = said(container, events)
    for sign in SIGNS:
        for text in texts:
            match = sign.pattern.search(text)
            if match is not None:
                quote = _one_line(text)
                quote = quote if len(quote) <= _EXCERPT else quote[: _EXCERPT - 3] + "..."
                return Diagnosis(sign.name, f'{sign.cause(match, runtime)} ("{quote}")', quote)
    return None


def how_it_fails(container: ContainerState) -> str:
    """``crash-loops``, ``was never created`` (it never ran), or ``fails``."""
    if not container.ran:
        return "was never created" if container.waiting and "Create" in container.waiting else "never started"
    return "crash-loops" if container.waiting == "CrashLoopBackOff" else "fails"


def show_command(cluster: Cluster, pod: Pod, container: ContainerState, namespace: str) -> str:
    """The command that shows why: the container's log once it has run, else the pod's description and events."""
    if container.ran:
        return commands.logs(cluster, namespace, pod.name, container.name)
    return commands.describe(cluster, namespace, "pod", pod.name)
