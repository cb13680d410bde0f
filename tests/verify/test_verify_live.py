"""``verify`` against an API server: a stand-in on 127.0.0.1 serves recorded lists at the real API paths, paged,
so that lightkube's own code runs (kubeconfig and context, plain HTTP, continue tokens). No other network."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import device_plugin_helpers
import pytest
from apiserver import api_server, write_kubeconfig
from click.testing import CliRunner
from dra_helpers import BROKEN as DRA_BROKEN
from dra_helpers import DRA_EXAMPLE
from dra_helpers import HEALTHY as DRA_HEALTHY
from hami_helpers import BROKEN, HAMI_EXAMPLE, HEALTHY
from verify_helpers import DATA, EXAMPLE, Files, copy_state

from gpustack_gen.cli import main

PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in PROXIES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.delenv("KUBECONFIG", raising=False)
    yield


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def body(report: str) -> str:
    return report.split("\n", 1)[1]  # all but the first line, which names the source


def verify_live_and_from(
    tmp_path: Path, folder: Path, fleet: Path, cluster: str, context: str
) -> tuple[str, list[tuple[str, str]]]:
    """``verify`` against the stand-in serving ``folder``, which must give the exit code (1) and the report of
    ``--from folder``; the report and the requests the server saw."""
    with api_server(folder) as (url, recorded):
        kubeconfig = write_kubeconfig(tmp_path / "config", {context: url}, context)
        code, out, _ = run("verify", str(fleet), "--cluster", cluster, "--kubeconfig", str(kubeconfig))
    files_code, files_out, _ = run("verify", str(fleet), "--cluster", cluster, "--from", str(folder))
    assert (code, body(out)) == (files_code, body(files_out)) == (1, body(files_out))
    return out, list(recorded.requests)


def test_the_api_gives_what_the_files_give_paged_and_read_only(tmp_path: Path) -> None:
    out, requests = verify_live_and_from(tmp_path, DATA / "prod-seed", EXAMPLE, "prod", "prod")
    assert out.startswith(f"gpustack-gen verify: cluster prod of {EXAMPLE} against context prod\n")
    assert {method for method, _ in requests} == {"GET"}
    paths = [path for _, path in requests]
    assert "/api/v1/nodes?limit=500" in paths
    assert any(path.startswith("/api/v1/nodes?limit=500&continue=") for path in paths)  # 4 nodes, 2 a page
    assert any(path.startswith("/api/v1/namespaces/gpu-operator/pods?") for path in paths)


def test_a_hami_cluster_lists_hami_s_release_by_its_label_in_its_namespace(tmp_path: Path) -> None:
    folder = copy_state(HEALTHY, tmp_path / "state", BROKEN)
    out, requests = verify_live_and_from(tmp_path, folder, HAMI_EXAMPLE, "stage", "stage")
    assert "error release-pods: Deployment kube-system/hami-scheduler: not rolled out" in out
    selected = "labelSelector=app.kubernetes.io%2Finstance%3Dhami"
    paths = [path for _, path in requests]
    for resource in (
        "/apis/apps/v1/namespaces/kube-system/daemonsets",
        "/apis/apps/v1/namespaces/kube-system/deployments",
    ):
        assert any(path.startswith(f"{resource}?") and selected in path for path in paths), resource
    assert any(path.startswith("/api/v1/namespaces/kube-system/pods?") and selected in path for path in paths)


def test_a_dra_cluster_lists_slices_and_claims_in_its_api_version_and_the_driver_s_release(tmp_path: Path) -> None:
    folder = copy_state(DRA_HEALTHY, tmp_path / "state", DRA_BROKEN)
    _, requests = verify_live_and_from(tmp_path, folder, DRA_EXAMPLE, "train", "train")
    assert {method for method, _ in requests} == {"GET"}
    paths = [path for _, path in requests]
    slices = "/apis/resource.k8s.io/v1/resourceslices?limit=500"
    assert slices in paths and any(path.startswith(f"{slices}&continue=") for path in paths)  # 5 slices, 2 a page
    for resource in ("deviceclasses", "resourceclaimtemplates", "resourceclaims"):  # claims: every namespace's
        assert any(path.startswith(f"/apis/resource.k8s.io/v1/{resource}?") for path in paths), resource
    selected = "labelSelector=app.kubernetes.io%2Finstance%3Dnvidia-dra-driver-gpu"
    daemonsets = "/apis/apps/v1/namespaces/nvidia-dra-driver-gpu/daemonsets?"
    assert any(path.startswith(daemonsets) and selected in path for path in paths)


def test_a_standalone_plugin_cluster_lists_the_chart_by_its_label_everywhere_and_no_clusterpolicy(
    tmp_path: Path,
) -> None:
    folder = copy_state(device_plugin_helpers.HEALTHY, tmp_path / "state", device_plugin_helpers.BROKEN)
    out, requests = verify_live_and_from(tmp_path, folder, device_plugin_helpers.DEVICE_PLUGIN_EXAMPLE, "lab", "lab")
    assert "the host's legacy OCI hook fails" in out
    paths = [path for _, path in requests]
    assert not any("clusterpolicies" in path for path in paths)
    selected = "labelSelector=app.kubernetes.io%2Fname%3Dnvidia-device-plugin"
    for resource in ("/apis/apps/v1/daemonsets", "/api/v1/pods", "/api/v1/configmaps"):  # every namespace's
        assert any(path.startswith(f"{resource}?") and selected in path for path in paths), resource


def test_an_api_version_the_server_does_not_serve_says_so(tmp_path: Path) -> None:
    text = DRA_EXAMPLE.read_text(encoding="utf-8").replace('kubernetes: "1.34.2"', 'kubernetes: "1.33.1"')
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(text, encoding="utf-8")
    with api_server(DATA / DRA_HEALTHY, versions=("v1",)) as (url, _):
        kubeconfig = write_kubeconfig(tmp_path / "config", {"train": url}, "train")
        code, _, err = run("verify", str(fleet), "--cluster", "train", "--kubeconfig", str(kubeconfig))
    assert code == 2
    assert err.splitlines()[-1].startswith("error: context train: ResourceSlice list: 404 NotFound: ")
    assert err.splitlines()[-1].endswith("(is resource.k8s.io/v1beta2 served?)")


def test_the_context_is_the_cluster_s_unless_the_option_names_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kubeconfig's current context plays no part: verify --cluster prod reads context prod (its kubeContext
    default), whatever context is current."""
    with api_server(DATA / "prod-healthy") as (url, _):
        kubeconfig = write_kubeconfig(tmp_path / "config", {"prod": closed_port(), "prod-admin": url}, "prod-admin")
        monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
        code, out, _ = run("verify", str(EXAMPLE), "--cluster", "prod", "--context", "prod-admin")
        assert (code, out.splitlines()[-1]) == (0, "the cluster matches the fleet: 0 errors, 0 warnings")
        code, out, err = run("verify", str(EXAMPLE), "--cluster", "prod")  # context prod: down
    assert code == 2 and out == ""
    assert err.splitlines()[-1].startswith("error: context prod (http://127.0.0.1:")
    assert "cannot list Nodes" in err


def test_an_unknown_context_and_a_missing_kubeconfig(tmp_path: Path) -> None:
    kubeconfig = write_kubeconfig(tmp_path / "config", {"prod": closed_port()}, "prod")
    code, _, err = run(
        "verify", str(EXAMPLE), "--cluster", "prod", "--kubeconfig", str(kubeconfig), "--context", "nope"
    )
    assert code == 2 and err.splitlines()[-1] == "error: kubeconfig: Context 'nope' not found"
    code, _, err = run("verify", str(EXAMPLE), "--cluster", "prod", "--kubeconfig", str(tmp_path / "missing"))
    assert code == 2 and err.splitlines()[-1].startswith("error: kubeconfig: Configuration file")


def test_a_refused_list_exits_2_with_the_api_message(tmp_path: Path) -> None:
    with api_server(DATA / "prod-healthy", forbidden=frozenset({"Pod"})) as (url, _):
        kubeconfig = write_kubeconfig(tmp_path / "config", {"prod": url}, "prod")
        code, _, err = run("verify", str(EXAMPLE), "--cluster", "prod", "--kubeconfig", str(kubeconfig))
    assert code == 2
    assert err.splitlines()[-1] == (
        'error: context prod: Pod list: 403 Forbidden: pods is forbidden: User "viewer" cannot list resource'
    )


def test_no_clusterpolicy_crd_is_a_finding(tmp_path: Path) -> None:
    folder = copy_state("prod-healthy", tmp_path / "state")
    (folder / "clusterpolicy.json").unlink()  # the server answers 404, as for a CRD that is not installed
    with api_server(folder) as (url, _):
        kubeconfig = write_kubeconfig(tmp_path / "config", {"prod": url}, "prod")
        code, out, _ = run("verify", str(EXAMPLE), "--cluster", "prod", "--kubeconfig", str(kubeconfig))
    assert code == 1
    assert (
        "  error clusterpolicy: no ClusterPolicy: the GPU Operator is not installed (apply the render: helm repo add nvidia https://helm.ngc.nvidia.com/nvidia && helm repo update nvidia && helm upgrade"
        in out
    )


def test_other_commands_and_verify_from_files_never_load_the_client() -> None:
    code = (
        "import sys\n"
        "from gpustack_gen.cli import main\n"
        "try:\n"
        f"    main(['verify', {str(EXAMPLE)!r}, '--cluster', 'prod', '--from', {str(DATA / 'prod-healthy')!r}])\n"
        "except SystemExit as exit:\n"
        "    assert exit.code == 0\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('lightkube', 'httpx2', 'msgspec')))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.stdout.splitlines()[-1] == "[]", done.stderr


def test_an_object_the_readers_refuse_exits_2_naming_the_list(tmp_path: Path) -> None:
    def nameless_node(files: Files) -> None:
        del files["nodes.json"]["items"][0]["metadata"]["name"]

    folder = copy_state("prod-healthy", tmp_path / "state", nameless_node)
    with api_server(folder) as (url, _):
        kubeconfig = write_kubeconfig(tmp_path / "config", {"prod": url}, "prod")
        code, out, err = run("verify", str(EXAMPLE), "--cluster", "prod", "--kubeconfig", str(kubeconfig))
    assert (code, out) == (2, "")
    assert "context prod: Node list: items[0]: a Node without metadata.name" in err


def test_the_pods_events_are_read_live_as_from_files(tmp_path: Path) -> None:
    from test_verify_pod_failures import HOOK_ERROR, POD, events, never_created
    from verify_helpers import both

    folder = copy_state("prod-healthy", tmp_path / "state", both(never_created(None), events(HOOK_ERROR)))
    out, requests = verify_live_and_from(tmp_path, folder, EXAMPLE, "prod", "prod")
    assert any(path.startswith("/api/v1/namespaces/gpu-operator/events?") for _, path in requests)
    assert "the host's own OCI hook /usr/bin/nvidia-container-toolkit fails" in out
    assert f"kubectl --context prod -n gpu-operator describe pod {POD}" in out
