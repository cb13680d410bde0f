"""The causes of a plugin pod's failure are read from what the kubelet said: its containers' waiting and terminated
messages and the pod's events (``events.json``, or live), and a container that never started is shown with
``kubectl describe pod``, not ``logs``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from verify_helpers import EXAMPLE, Files, both, cluster, copy_state, item, set_advertised

from gpustack_gen.k8s_state import ContainerState, Event
from gpustack_gen.k8s_state.load import Where
from gpustack_gen.verify import read_state_dir, verify_cluster
from gpustack_gen.verify.pod_failures import diagnose, how_it_fails

POD = "nvidia-device-plugin-daemonset-x0k2p"
NODE = "gpu-t4-a"
# The write-up's failure: CRI-O runs the host package's legacy hook for every container.
HOOK_ERROR = (
    "container create failed: error executing hook `/usr/bin/nvidia-container-toolkit` (exit code: 1), "
    "stdout: , stderr: nvidia-container-cli: initialization error: load library failed"
)
NVML_ERROR = "could not load NVML library: libnvidia-ml.so.1: cannot open shared object file: No such file or directory"


def _plugin_pod(files: Files) -> dict[str, Any]:
    pod = item(files, "operator.json", "Pod", POD)
    assert pod["spec"]["nodeName"] == NODE
    return pod


def _container(files: Files, name: str, *, init: bool = False) -> dict[str, Any]:
    statuses = _plugin_pod(files)["status"]["initContainerStatuses" if init else "containerStatuses"]
    return next(status for status in statuses if status["name"] == name)


def never_created(message: str | None) -> Any:
    """The plugin container on gpu-t4-a waits in CreateContainerError and has never run."""

    def edit(files: Files) -> None:
        status = _container(files, "nvidia-device-plugin")
        status.update(ready=False, started=False, restartCount=0)
        status.pop("lastState", None)
        status["state"] = {"waiting": {"reason": "CreateContainerError", **({"message": message} if message else {})}}
        _plugin_pod(files)["status"]["phase"] = "Pending"
        set_advertised(files, NODE, "nvidia.com/gpu", 0)

    return edit


def events(*messages: str) -> Any:
    def edit(files: Files) -> None:
        files["events.json"] = {
            "apiVersion": "v1",
            "kind": "List",
            "items": [
                {
                    "apiVersion": "v1",
                    "kind": "Event",
                    "metadata": {"name": f"{POD}.{index}", "namespace": "gpu-operator"},
                    "involvedObject": {"kind": "Pod", "name": POD, "namespace": "gpu-operator"},
                    "reason": "Failed",
                    "message": message,
                    "type": "Warning",
                    "count": 12,
                }
                for index, message in enumerate(messages)
            ],
        }

    return edit


def first_cause(tmp_path: Path, edit: Any) -> str:
    prod = cluster("prod")
    folder = copy_state("prod-healthy", tmp_path / "state", edit)
    result = verify_cluster(prod, read_state_dir(folder, prod), fleet_label=str(EXAMPLE))
    finding = next(f for f in result.findings if f.check == "gpu-not-advertised" and f.node == NODE)
    assert finding.hint.startswith("likely: ")
    return finding.hint.removeprefix("likely: ").split("; or: ")[0]


def test_the_host_hook_in_the_waiting_message_is_named_first_with_describe(tmp_path: Path) -> None:
    cause = first_cause(tmp_path, never_created(HOOK_ERROR))
    assert cause.startswith(
        f"container nvidia-device-plugin (CreateContainerError) of pod {POD} was never created: the host's own OCI "
        "hook /usr/bin/nvidia-container-toolkit fails, not the Operator's toolkit"
    )
    assert "/usr/share/containers/oci/hooks.d" in cause and "crash-loops" not in cause
    assert cause.endswith(f"; kubectl --context prod -n gpu-operator describe pod {POD}")
    assert " logs " not in cause


def test_the_host_hook_in_an_event_is_read_when_the_status_says_nothing(tmp_path: Path) -> None:
    cause = first_cause(tmp_path, both(never_created(None), events(HOOK_ERROR)))
    assert "the host's own OCI hook /usr/bin/nvidia-container-toolkit fails" in cause
    assert "describe pod" in cause


def test_without_messages_the_runtime_cause_does_not_contradict_an_event(tmp_path: Path) -> None:
    cause = first_cause(tmp_path, never_created(None))
    assert "not in CRI-O's hooks dir" not in cause
    assert cause.endswith(f"kubectl --context prod -n gpu-operator describe pod {POD}")


def crash_loop(name: str, message: str, *, init: bool = False) -> Any:
    """Container ``name`` of the plugin pod on gpu-t4-a back-offs after a run that exited 1 saying ``message``."""

    def edit(files: Files) -> None:
        status = _container(files, name, init=init)
        status.update(ready=False, restartCount=7)
        status["state"] = {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s restarting"}}
        status["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error", "message": message}}
        set_advertised(files, NODE, "nvidia.com/gpu", 0)

    return edit


def test_nvml_not_found_in_the_last_run_says_why_with_logs(tmp_path: Path) -> None:
    cause = first_cause(tmp_path, crash_loop("nvidia-device-plugin", NVML_ERROR))
    assert "crash-loops: NVML not found: the container gets no driver" in cause
    assert cause.endswith(f"kubectl --context prod -n gpu-operator logs {POD} -c nvidia-device-plugin")


def test_a_missing_config_key_in_the_init_container(tmp_path: Path) -> None:
    cause = first_cause(tmp_path, crash_loop("config-manager-init", 'specified config "t4x" does not exist', init=True))
    assert "key t4x is missing from the device plugin's ConfigMap" in cause
    assert cause.endswith(f"kubectl --context prod -n gpu-operator logs {POD} -c config-manager-init")


def test_an_init_container_waiting_for_the_toolkit(tmp_path: Path) -> None:
    def waits(files: Files) -> None:
        status = _container(files, "toolkit-validation", init=True)
        status.update(ready=False)
        status["state"] = {"running": {"startedAt": "2026-10-01T08:12:31Z"}}
        _plugin_pod(files)["status"]["phase"] = "Pending"
        set_advertised(files, NODE, "nvidia.com/gpu", 0)

    cause = first_cause(tmp_path, waits)
    assert cause.startswith("the container toolkit is not ready on the node")
    assert "-l app=nvidia-container-toolkit-daemonset" in cause


def test_the_rollout_hint_describes_a_pod_that_never_started(tmp_path: Path) -> None:
    prod = cluster("prod")

    def not_ready(files: Files) -> None:
        item(files, "operator.json", "DaemonSet", "nvidia-device-plugin-daemonset")["status"]["numberReady"] = 2

    folder = copy_state("prod-healthy", tmp_path / "state", both(never_created(HOOK_ERROR), not_ready))
    result = verify_cluster(prod, read_state_dir(folder, prod), fleet_label=str(EXAMPLE))
    hints = [f.hint for f in result.findings if f.check == "operator-pods"]
    assert any(f"kubectl --context prod -n gpu-operator describe pod {POD}" in hint for hint in hints), hints


WHERE = Where("test", 0)


def _state(**fields: Any) -> ContainerState:
    base: dict[str, Any] = {"name": "c", "init": False, "ready": False, "restarts": 0, "waiting": None}
    return ContainerState(**{**base, "last_exit": None, **fields})


@pytest.mark.parametrize(
    ("message", "sign"),
    [
        (HOOK_ERROR, "host-hook"),
        ("error executing hook `/usr/bin/nvidia-container-runtime-hook` (exit code: 1)", "host-hook"),
        ("error executing hook `/usr/local/nvidia/toolkit/nvidia-container-runtime-hook`", "operator-hook"),
        (NVML_ERROR, "nvml"),
        ('specified config "big" does not exist', "missing-config-key"),
    ],
)
def test_each_sign_is_read_from_a_message(message: str, sign: str) -> None:
    found = diagnose(_state(waiting="CreateContainerError", message=message, ran=False), (), "cri-o")
    assert found is not None and found.sign == sign


def test_normal_events_and_unknown_messages_say_nothing() -> None:
    normal = Event("gpu-operator", "Pod", "p", "Pulled", NVML_ERROR, "Normal", 1, WHERE)
    assert diagnose(_state(waiting="CrashLoopBackOff", message="back-off"), (normal,), "cri-o") is None


def test_a_message_is_quoted_short_and_printable() -> None:
    found = diagnose(_state(message=HOOK_ERROR + "\x1b]52;c;x\x07" + "x" * 500, ran=False), (), "cri-o")
    assert found is not None
    assert "\x1b" not in found.cause and "\x07" not in found.cause and len(found.quote) <= 160


def test_how_a_container_fails() -> None:
    assert how_it_fails(_state(waiting="CreateContainerError", ran=False)) == "was never created"
    assert how_it_fails(_state(waiting="CrashLoopBackOff", restarts=3)) == "crash-loops"
    assert how_it_fails(_state(waiting="ImagePullBackOff", ran=False)) == "never started"


def test_events_are_read_from_a_kubectl_list(tmp_path: Path) -> None:
    prod = cluster("prod")
    folder = copy_state("prod-healthy", tmp_path / "state", events(HOOK_ERROR))
    state = read_state_dir(folder, prod)
    assert [event.message for event in state.events or ()] == [HOOK_ERROR]
    assert json.loads((folder / "events.json").read_text())["items"][0]["count"] == 12


def test_hami_s_plugin_that_was_never_created_names_the_host_hook_with_describe(tmp_path: Path) -> None:
    from hami_helpers import advertise, verify_stage

    def never(files: Files) -> None:
        pod = item(files, "hami.json", "Pod", "hami-device-plugin-7xk2p")
        status = next(s for s in pod["status"]["containerStatuses"] if s["name"] == "device-plugin")
        status.update(ready=False, started=False, restartCount=0)
        status.pop("lastState", None)
        status["state"] = {"waiting": {"reason": "CreateContainerError", "message": HOOK_ERROR}}

    result = verify_stage(tmp_path / "state", both(never, advertise("stage-t4-a", 0)))
    hints = [f.hint for f in result.findings if f.node == "stage-t4-a" and f.check == "gpu-not-advertised"]
    assert hints and "was never created: the host's own OCI hook /usr/bin/nvidia-container-toolkit" in hints[0]
    assert "kubectl --context stage -n kube-system describe pod hami-device-plugin-7xk2p" in hints[0]
