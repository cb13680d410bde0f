"""``verify`` on a standalone device plugin cluster: no ClusterPolicy or Operator is asked for, the chart's objects
are read by its label in every namespace, the plugin's pod is told from GFD's, and a node at 0 gets its causes
ranked as the write-up lived them: the host's OCI hook under CRI-O, NVML not found, the config-manager's missing
key, no plugin pod on the node."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from device_plugin_helpers import (
    BROKEN_NODE,
    DEVICE_PLUGIN_EXAMPLE,
    HEALTHY,
    PLUGIN,
    RELEASE_FILE,
    Edit,
    advertise,
    config_replicas,
    gfd_pod_on,
    hook_fails,
    lab,
    missing_key,
    moved_to,
    nvml_missing,
    plugin_gone,
    verify_lab,
)
from verify_helpers import DATA, Files, both, label

from gpustack_gen.cli import main
from gpustack_gen.compile.backends import backend_of
from gpustack_gen.compile.backends.device_plugin.values import device_plugin_release
from gpustack_gen.errors import ExitCode, Severity
from gpustack_gen.model.backends.device_plugin import SWITCH_LABEL
from gpustack_gen.shell import IntoFile, command, kubectl, text_in
from gpustack_gen.verify import VerifyResult, state_parts
from gpustack_gen.verify.backends import VERIFY_BACKENDS, verify_backend
from gpustack_gen.verify.backends.device_plugin import PLUGIN_CONTAINER

CONFIGMAP = "nvdp-nvidia-device-plugin-configs"  # the chart's ConfigMap of release nvdp (_helpers.tpl:237-248)


def causes(result: VerifyResult, node: str = BROKEN_NODE) -> list[str]:
    """The ranked causes of the node's gpu-not-advertised finding, most likely first."""
    (finding,) = [f for f in result.findings if f.check == "gpu-not-advertised" and f.node == node]
    assert finding.hint.startswith("likely: ")
    return finding.hint.removeprefix("likely: ").split("; or: ")


def test_the_cluster_has_the_backend_hook_and_reads_no_operator_state() -> None:
    cluster = lab()
    assert not backend_of(cluster).INSTALLS_OPERATOR
    assert verify_backend(cluster) is VERIFY_BACKENDS["device-plugin"]
    names = [part.name for part in state_parts(cluster)]
    assert "clusterpolicy" not in names and "operator" not in names
    assert names.count("configmaps") == names.count("release") == 1
    release = next(part for part in state_parts(cluster) if part.name == "release")
    listing = kubectl(
        "get", "daemonsets,deployments,pods", "-A", "-l", "app.kubernetes.io/name=nvidia-device-plugin", "-o", "json"
    )
    expected = IntoFile(listing, f"{device_plugin_release(cluster).name}.json")
    assert text_in("lab", release.command_into(Path("."))) == text_in("lab", expected)


def test_the_healthy_lab_verifies_clean_through_the_cli() -> None:
    result = CliRunner().invoke(
        main, ["verify", str(DEVICE_PLUGIN_EXAMPLE), "--cluster", "lab", "--from", str(DATA / HEALTHY)]
    )
    assert result.exit_code == ExitCode.OK, result.stdout
    assert "the cluster matches the fleet" in result.stdout


def test_no_clusterpolicy_check_is_run_or_reported_skipped(tmp_path: Path) -> None:
    result = verify_lab(tmp_path / "state")
    ran_or_skipped = {f.check for f in result.findings} | {s.check for s in result.skipped}
    assert not ran_or_skipped & {"clusterpolicy", "operator-pods"}
    assert result.count(Severity.ERROR) == 0


def test_a_release_installed_in_another_namespace_is_found_there(tmp_path: Path) -> None:
    result = verify_lab(tmp_path / "state", moved_to("kube-system"))
    assert result.count(Severity.ERROR) == 0
    broken = verify_lab(tmp_path / "broken", both(moved_to("kube-system"), hook_fails(BROKEN_NODE)))
    (rollout,) = [f for f in broken.findings if f.check == "release-pods"]
    assert rollout.subject == f"DaemonSet kube-system/{PLUGIN}"
    assert "-n kube-system describe pod" in causes(broken)[0]
    gone = verify_lab(tmp_path / "gone", both(moved_to("kube-system"), plugin_gone(BROKEN_NODE)))
    assert text_in("lab", kubectl("-n", "kube-system", "describe", "daemonset", PLUGIN)) in causes(gone)[0]


def test_the_host_hook_under_cri_o_comes_first_with_the_operator_move_and_the_hook_file(tmp_path: Path) -> None:
    first = causes(verify_lab(tmp_path / "state", hook_fails(BROKEN_NODE)))[0]
    assert first.startswith(f"container {PLUGIN_CONTAINER} (CreateContainerError)")
    assert "error executing hook `/usr/bin/nvidia-container-toolkit`" in first
    # the fleet file as verify was given it, so the command works from where verify ran
    assert (
        text_in("lab", command("gpustack-gen", "plan", "--base", "HEAD", "examples/device-plugin/fleet.yaml")) in first
    )
    assert "backend: gpu-operator" in first and "oci-nvidia-hook.json" in first
    assert text_in("lab", kubectl("debug", f"node/{BROKEN_NODE}", "-it", "--image=busybox", "--")) in first


@pytest.mark.parametrize("message", [True, False], ids=["log-line", "no-message"])
def test_nvml_not_found_names_the_driver_and_runtime(tmp_path: Path, message: bool) -> None:
    first = causes(verify_lab(tmp_path / "state", nvml_missing(BROKEN_NODE, message=message)))[0]
    assert "crash-loops" in first and "NVML" in first
    assert "driver" in first and "runtime" in first
    assert text_in("lab", kubectl("-n", "nvidia-device-plugin", "logs")) in first


def test_the_config_managers_missing_key_names_the_label_and_the_configmap(tmp_path: Path) -> None:
    first = causes(verify_lab(tmp_path / "state", missing_key(BROKEN_NODE, "t4-shared")))[0]
    assert first.startswith("container nvidia-device-plugin-init")
    assert f"names key t4-shared, missing from ConfigMap {CONFIGMAP}" in first
    assert '"specified config t4-shared does not exist"' in first
    relabel = kubectl("label", "node", BROKEN_NODE, "nvidia.com/device-plugin.config=t4", "--overwrite")
    assert text_in("lab", relabel) in first


def test_a_missing_key_is_named_before_the_init_container_fails(tmp_path: Path) -> None:
    """The key is read at the pod's start: a label changed since names its key before the next restart fails."""
    result = verify_lab(
        tmp_path / "state",
        both(label(BROKEN_NODE, "nvidia.com/device-plugin.config", "t4-shared"), nvml_missing(BROKEN_NODE)),
    )
    ranked = causes(result)
    assert "NVML" in ranked[0] and "specified config t4-shared does not exist" in ranked[1]


def test_the_hook_outranks_the_missing_key(tmp_path: Path) -> None:
    edit: Edit = both(hook_fails(BROKEN_NODE), label(BROKEN_NODE, "nvidia.com/device-plugin.config", "t4-shared"))
    ranked = causes(verify_lab(tmp_path / "state", edit))
    assert "legacy OCI hook" in ranked[0] and "t4-shared" in ranked[1]


def test_no_plugin_pod_because_the_switch_is_off(tmp_path: Path) -> None:
    edit = both(plugin_gone(BROKEN_NODE), label(BROKEN_NODE, SWITCH_LABEL, "off"))
    (first,) = causes(verify_lab(tmp_path / "state", edit))
    assert f"{SWITCH_LABEL} label is off" in first
    assert text_in("lab", kubectl("label", "node", BROKEN_NODE, f"{SWITCH_LABEL}-")) in first


def test_no_plugin_pod_because_no_affinity_term_matches(tmp_path: Path) -> None:
    edit = both(
        plugin_gone(BROKEN_NODE),
        label(BROKEN_NODE, "nvidia.com/gpu.present", None),
        label(BROKEN_NODE, "nvidia.com/gpu.count", "1"),  # GFD's, from before: the node still shows its GPU
    )
    (first,) = causes(verify_lab(tmp_path / "state", edit))
    assert "no term of the chart's node affinity matches it" in first
    assert text_in("lab", kubectl("label", "node", BROKEN_NODE, "nvidia.com/gpu.present=true", "--overwrite")) in first


def test_a_gfd_pod_of_the_release_is_not_taken_for_the_plugin(tmp_path: Path) -> None:
    (first,) = causes(verify_lab(tmp_path / "state", both(gfd_pod_on(BROKEN_NODE), plugin_gone(BROKEN_NODE))))
    assert first.startswith("no plugin pod on the node")


def test_a_node_without_its_config_label_is_covered_by_the_same_default(tmp_path: Path) -> None:
    result = verify_lab(tmp_path / "state", label(BROKEN_NODE, "nvidia.com/device-plugin.config", None))
    (finding,) = [f for f in result.findings if f.check == "label-mismatch"]
    assert finding.severity is Severity.WARNING and "covered by any" in finding.message


def capacity_hint(result: VerifyResult) -> str:
    (finding,) = [f for f in result.findings if f.check == "capacity-mismatch" and f.node == BROKEN_NODE]
    return finding.hint


def test_another_amount_from_the_configmap_says_the_release_is_not_the_render(tmp_path: Path) -> None:
    hint = capacity_hint(verify_lab(tmp_path / "state", both(config_replicas("t4", 4), advertise(BROKEN_NODE, 4))))
    assert f"ConfigMap {CONFIGMAP} key t4 gives 4 per node" in hint
    assert (
        text_in("lab", device_plugin_release(lab()).install_commands("rendered/lab/nvidia-device-plugin-values.yaml"))
        in hint
    )


def test_another_amount_under_the_render_s_configmap_is_a_plugin_not_restarted(tmp_path: Path) -> None:
    hint = capacity_hint(verify_lab(tmp_path / "state", advertise(BROKEN_NODE, 4)))
    assert "has not restarted since ConfigMap" in hint
    assert text_in("lab", kubectl("rollout", "restart", "-n", "nvidia-device-plugin", f"daemonset/{PLUGIN}")) in hint


def test_without_the_release_s_pods_the_usual_causes_come_in_the_write_up_s_order(tmp_path: Path) -> None:
    def drop(files: Files) -> None:
        del files[RELEASE_FILE]

    ranked = causes(verify_lab(tmp_path / "state", both(advertise(BROKEN_NODE, 0), drop)))
    assert "legacy OCI hook" in ranked[0] and "NVML" in ranked[1] and "specified config X" in ranked[2]
