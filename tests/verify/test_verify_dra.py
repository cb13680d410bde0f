"""``verify`` on a DRA cluster: the devices each node publishes in ResourceSlices where capacity is checked, the
DRA kubelet plugin rolled out, the Operator's own device plugin off, the DeviceClasses and claims of the render;
each check silent on the healthy train cluster and failed by fixtures; slices and claims read in every
``resource.k8s.io`` version."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from dra_helpers import (
    A100,
    DRA_EXAMPLE,
    H100,
    HEALTHY,
    PLUGIN,
    RELEASE,
    Edit,
    devices_of,
    drop_slice,
    keep_devices,
    node_slice,
    operator_plugin_runs,
    plugin_crashes,
    published_whole,
    republish,
    slice_of,
    train,
    unlabelled,
    verify_train,
)
from verify_helpers import DATA, Files, both, copy_state, item, label, node

from gpustack_gen import load_fleet
from gpustack_gen.cli import main
from gpustack_gen.compile.backends.dra.claims import claim_name
from gpustack_gen.errors import ExitCode, Severity
from gpustack_gen.shell import text_in
from gpustack_gen.verify import read_state_dir, state_parts, verify_cluster
from gpustack_gen.verify.backends import VERIFY_BACKENDS, verify_backend
from gpustack_gen.verify.checks import CHECK_IDS, get


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


def test_a_dra_cluster_reads_its_slices_objects_and_the_driver_s_release() -> None:
    assert verify_backend(train()) is VERIFY_BACKENDS["dra"]
    assert [text_in("train", part.command_into(Path("."))) for part in state_parts(train())[5:]] == [
        "kubectl --context train get resourceslices -o json > resourceslices.json",
        "kubectl --context train get deviceclasses,resourceclaimtemplates,resourceclaims -A -o json > dra.json",
        "kubectl --context train get daemonsets,deployments,pods -n nvidia-dra-driver-gpu -l app.kubernetes.io/instance=nvidia-dra-driver-gpu "
        "-o json > nvidia-dra-driver-gpu.json",
    ]


def test_the_example_on_a_healthy_cluster_exits_0_and_counts_the_published_devices() -> None:
    code, out = run("verify", str(DRA_EXAMPLE), "--cluster", "train", "--from", str(DATA / HEALTHY))
    assert code == 0
    lines = out.splitlines()
    cluster = train()
    for pool in cluster.pools:  # each pool's devices, per DeviceClass, as the model counts them
        tallies = ", ".join(f"{name} {total}/{total}" for name, total in cluster.resources_total(pool).items())
        assert any(line.startswith(f"  {pool.name} (") and line.endswith(f"nodes ok; {tallies}") for line in lines)
    assert "  gpu-h100-1: ok (h100.gpu.gpustack-gen.dev 8)" in lines
    assert lines[-1] == "the cluster matches the fleet: 0 errors, 0 warnings"


@pytest.mark.parametrize("check", CHECK_IDS)
def test_the_healthy_train_passes(check: str, tmp_path: Path) -> None:
    result = verify_train(tmp_path / "state")
    assert [f.message for f in result.findings if f.check == check] == []
    assert result.skipped == ()


# --- edits ------------------------------------------------------------------------------------------------------


def _pool(name: str, **sharing: Any) -> Any:
    pool = train().pool(name)
    assert pool is not None
    return dataclasses.replace(pool, sharing=dataclasses.replace(pool.sharing, **sharing)) if sharing else pool


def _remove_node(files: Files) -> None:
    files["nodes.json"]["items"].remove(node(files, H100))


def _foreign_gpu_node(files: Files) -> None:
    extra = json.loads(json.dumps(node(files, H100)))
    extra["metadata"]["name"] = "gpu-l4-1"
    extra["metadata"]["labels"].update({"pool": "l4", "nvidia.com/gpu.product": "NVIDIA-L4"})
    files["nodes.json"]["items"].append(extra)


def _without_gpu(files: Files) -> None:
    """A node of the pool that came up without GPUs: no GPU label, nothing published."""
    labels = node(files, H100)["metadata"]["labels"]
    for key in [k for k in labels if k.startswith(("nvidia.com/gpu.", "feature.node.kubernetes.io/pci-10de"))]:
        del labels[key]
    drop_slice(H100)(files)


def _allocatable_gpus(files: Files) -> None:
    """A device plugin registers the node's GPUs with the kubelet beside the DRA driver."""
    status = node(files, H100)["status"]
    status["capacity"]["nvidia.com/gpu"] = status["allocatable"]["nvidia.com/gpu"] = "8"


def _incomplete(files: Files) -> None:
    slice_of(files, H100)["spec"]["pool"].update(generation=2, resourceSliceCount=2)


def _tainted(files: Files) -> None:
    devices_of(files, H100)[3]["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoExecute"}]


def _product(files: Files) -> None:
    for device in devices_of(files, H100):
        device["attributes"]["productName"] = {"string": "NVIDIA H200"}


def _device_class(files: Files, name: str) -> dict[str, Any]:
    return item(files, "dra.json", "DeviceClass", name)


def _selector_edited(files: Files) -> None:
    selector = _device_class(files, "h100.gpu.gpustack-gen.dev")["spec"]["selectors"][0]["cel"]
    selector["expression"] = selector["expression"].replace("'NVIDIA H100 80GB HBM3', ", "")


def _class_removed(files: Files) -> None:
    files["dra.json"]["items"].remove(_device_class(files, "a100.mig-1g.5gb.gpustack-gen.dev"))


def _stale_class(files: Files) -> None:
    stale = json.loads(json.dumps(_device_class(files, "h100.gpu.gpustack-gen.dev")))
    stale["metadata"]["name"] = "l4.gpu.gpustack-gen.dev"
    files["dra.json"]["items"].append(stale)


def _template_edited(files: Files) -> None:
    template = item(files, "dra.json", "ResourceClaimTemplate", "llm-finetune.h100.gpu.x8")
    template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = 4


def _policy_plugin_on(files: Files) -> None:
    files["clusterpolicy.json"]["items"][0]["spec"]["devicePlugin"]["enabled"] = True


def _gfd_unready(files: Files) -> None:
    item(files, "operator.json", "DaemonSet", "gpu-feature-discovery")["status"]["numberReady"] = 4


def _mig_failed(files: Files) -> None:
    node(files, A100)["metadata"]["labels"]["nvidia.com/mig.config.state"] = "failed"


def _migparted_edited(files: Files) -> None:
    configmap = item(files, "configmaps.json", "ConfigMap", "gpustack-mig-parted-config")
    configmap["data"]["config.yaml"] = configmap["data"]["config.yaml"].replace("1g.5gb: 2", "1g.5gb: 1")


def _plugin_removed(files: Files) -> None:
    files[RELEASE]["items"] = [i for i in files[RELEASE]["items"] if i["kind"] != "DaemonSet"]


ERROR = "error"
# check id -> [(edit, [(pool, node, subject, severity)], a phrase the check's first hint holds)]
DRA_FAILING: dict[str, list[tuple[Edit, list[tuple[Any, ...]], str]]] = {
    "pool-size": [(_remove_node, [("h100", None, "nodes", ERROR)], "--selector pool=h100")],
    "unmatched-gpu-node": [(_foreign_gpu_node, [(None, "gpu-l4-1", "nodeSelector", ERROR)], "add a pool")],
    "gpu-not-advertised": [
        (
            unlabelled(H100),
            [("h100", H100, "h100.gpu.gpustack-gen.dev", ERROR)],
            "not labelled nvidia.com/dra-kubelet",
        ),
        (
            both(drop_slice(H100), plugin_crashes(H100)),
            [("h100", H100, "h100.gpu.gpustack-gen.dev", ERROR)],
            "container gpus (CrashLoopBackOff, exit code 1 (Error)) of pod nvidia-dra-driver-gpu-kubelet-plugin",
        ),
        (drop_slice(H100), [("h100", H100, "h100.gpu.gpustack-gen.dev", ERROR)], "runs and is ready, yet publishes no"),
        (
            published_whole(A100),
            [("a100", A100, ", ".join(train().resources_per_node(_pool("a100"))), ERROR)],
            "8 GPUs are published whole (type gpu), not as MIG devices",
        ),
        (
            both(drop_slice(A100), label(A100, "nvidia.com/mig.config.state", "pending")),
            [("a100", A100, ", ".join(train().resources_per_node(_pool("a100"))), Severity.WARNING)],  # in progress
            "the mig-manager has not finished (nvidia.com/mig.config.state=pending",
        ),
    ],
    "capacity-mismatch": [
        (
            republish(A100, _pool("a100", mig_layout=(("1g.5gb", 7),))),
            [
                ("a100", A100, f"a100.mig-{profile}.gpustack-gen.dev in ResourceSlices of gpu.nvidia.com", ERROR)
                for profile in ("3g.20gb", "2g.10gb", "1g.5gb")
            ],
            "it publishes MIG devices 56 1g.5gb, the pool's layout gives 8 3g.20gb, 8 2g.10gb, 16 1g.5gb",
        ),
        (
            keep_devices(H100, lambda d: d["name"] != "gpu-7"),
            [("h100", H100, "h100.gpu.gpustack-gen.dev in ResourceSlices of gpu.nvidia.com", ERROR)],
            "it publishes devices of 7 GPUs, the pool says gpusPerNode 8",
        ),
        (
            _without_gpu,
            [("h100", H100, "h100.gpu.gpustack-gen.dev in ResourceSlices of gpu.nvidia.com", ERROR)],
            "no GPU shows on the node",
        ),
        (
            both(_allocatable_gpus, operator_plugin_runs(H100)),
            [("h100", H100, "nvidia.com/gpu", ERROR)],
            "the GPU Operator's own device plugin runs on the node (pod nvidia-device-plugin-daemonset-",
        ),
        (
            both(_allocatable_gpus, label(H100, "nvidia.com/gpu.deploy.device-plugin", None)),
            [("h100", H100, "nvidia.com/gpu", ERROR)],
            "label is absent, so the GPU Operator runs its device plugin there",
        ),
        (
            _allocatable_gpus,
            [("h100", H100, "nvidia.com/gpu", ERROR)],
            "a device plugin other than the GPU Operator's registers nvidia.com/gpu with the kubelet on the node",
        ),
    ],
    "node-registration": [
        (_incomplete, [("h100", H100, "ResourceSlices of gpu.nvidia.com", ERROR)], "a slice of it was deleted"),
    ],
    "gpu-health": [(_tainted, [("h100", H100, "gpu-3 (GPU-", ERROR)], "gpu.nvidia.com/xid=79:NoExecute")],
    "label-mismatch": [
        (
            label(H100, "nvidia.com/gpu.deploy.device-plugin", "true"),
            [("h100", H100, "label nvidia.com/gpu.deploy.device-plugin", ERROR)],
            "kubectl --context train label node gpu-h100-2 nvidia.com/gpu.deploy.device-plugin=false",
        )
    ],
    "product-mismatch": [
        (
            _product,
            [("h100", H100, "GPU type in ResourceSlices of gpu.nvidia.com", ERROR)],
            "set the pool's gpu to h200-141gb",
        )
    ],
    "mig-state": [(_mig_failed, [("a100", A100, "label nvidia.com/mig.config.state", ERROR)], "could not apply")],
    "clusterpolicy": [(_policy_plugin_on, [(None, None, "spec.devicePlugin.enabled", ERROR)], "helm upgrade")],
    "configmap-drift": [
        (
            _migparted_edited,
            [(None, None, "ConfigMap gpu-operator/gpustack-mig-parted-config key config.yaml", ERROR)],
            "kubectl --context train apply -k rendered/train",
        )
    ],
    "dra-objects": [
        (
            _class_removed,
            [(None, None, "DeviceClass a100.mig-1g.5gb.gpustack-gen.dev", ERROR)],
            "kubectl --context train apply -k rendered/train",
        ),
        (
            _selector_edited,
            [(None, None, "DeviceClass h100.gpu.gpustack-gen.dev", ERROR)],
            "a claim prepared before keeps the config it got",
        ),
        (
            _template_edited,
            [(None, None, "ResourceClaimTemplate research/llm-finetune.h100.gpu.x8", ERROR)],
            "kubectl --context train delete resourceclaimtemplate -n research llm-finetune.h100.gpu.x8 && kubectl --context train apply -k",
        ),
        (_stale_class, [(None, None, "DeviceClass l4.gpu.gpustack-gen.dev", "warning")], "gpustack-gen plan deletes"),
    ],
    "operator-pods": [
        (
            operator_plugin_runs(H100),
            [(None, None, "DaemonSet gpu-operator/nvidia-device-plugin-daemonset", ERROR)],
            "the DRA driver must not share a node with it",
        ),
        (_gfd_unready, [(None, None, "DaemonSet gpu-operator/gpu-feature-discovery", ERROR)], "rollout status"),
    ],
    "release-pods": [
        (
            plugin_crashes(H100),
            [(None, None, f"DaemonSet nvidia-dra-driver-gpu/{PLUGIN}", ERROR)],
            "it publishes the node's GPUs and MIG devices in ResourceSlices",
        ),
        (
            _plugin_removed,
            [(None, None, f"DaemonSet nvidia-dra-driver-gpu/{PLUGIN}", ERROR)],
            "helm upgrade --install nvidia-dra-driver-gpu oci://registry.k8s.io/dra-driver-nvidia/charts/",
        ),
    ],
}
CASES = [
    pytest.param(check, *case, id=f"{check}-{index}")
    for check, cases in DRA_FAILING.items()
    for index, case in enumerate(cases)
]


def test_every_check_has_a_failing_dra_fixture() -> None:
    assert sorted(DRA_FAILING) == sorted(CHECK_IDS)


@pytest.mark.parametrize(("check", "edit", "expected", "phrase"), CASES)
def test_a_dra_cluster_that_differs_fails_the_check(
    check: str, edit: Callable[[Files], None], expected: list[tuple[Any, ...]], phrase: str, tmp_path: Path
) -> None:
    result = verify_train(tmp_path / "state", edit)
    found = sorted(
        ((f.pool, f.node, f.subject, f.severity.value) for f in result.findings if f.check == check), key=repr
    )
    assert len(found) == len(expected), found
    for got, want in zip(found, sorted(expected, key=repr), strict=True):
        pool, node_name, subject, severity = want  # a subject may be given by its start (a device's UUID follows)
        assert (got[0], got[1], got[2][: len(subject)], got[3]) == (pool, node_name, subject, severity)
    first = next(f for f in result.findings if f.check == check)
    assert phrase in first.hint
    assert check == get(check).ID
    if any(row[3] == ERROR for row in expected):
        assert result.exit_code is ExitCode.DIFFERS


def test_a_node_without_its_label_is_reported_once_per_cause(tmp_path: Path) -> None:
    result = verify_train(tmp_path / "state", unlabelled(H100))
    assert [(f.check, f.node) for f in result.findings] == [
        ("gpu-not-advertised", H100),
        ("label-mismatch", H100),
    ]
    (advertised, labelled) = result.findings
    assert advertised.hint.count("likely: ") == 1 and "or: " not in advertised.hint  # nothing runs there: one cause
    assert labelled.message.endswith("the DRA kubelet plugin runs only on nodes labelled "
                                     "nvidia.com/dra-kubelet-plugin=true: the node publishes no device")  # fmt: skip


def test_a_missing_slices_file_skips_the_checks_that_read_what_nodes_publish(tmp_path: Path) -> None:
    folder = copy_state(HEALTHY, tmp_path / "state")
    (folder / "resourceslices.json").unlink()
    code, out = run("verify", str(DRA_EXAMPLE), "--cluster", "train", "--from", str(folder))
    assert code == 0
    skipped = [line.split(":", 1)[0] for line in out.splitlines() if line.startswith("skipped ")]
    assert skipped == [
        f"skipped {check}" for check in ("gpu-not-advertised", "capacity-mismatch", "node-registration", "gpu-health")
    ]
    assert "  h100 (h100-80gb, whole GPUs): 2/2 nodes ok" in out.splitlines()  # no device count it could not read


def test_a_slice_of_another_driver_or_an_older_generation_does_not_count(tmp_path: Path) -> None:
    def edit(files: Files) -> None:
        mine = slice_of(files, H100)
        other = json.loads(json.dumps(mine))
        other["spec"]["driver"] = "gpu.example.com"
        older = json.loads(json.dumps(mine))
        older["spec"]["devices"] = older["spec"]["devices"][:2]
        mine["spec"]["pool"]["generation"] = 2
        files["resourceslices.json"]["items"] += [other, older]

    assert verify_train(tmp_path / "state", edit).findings == ()


def test_a_shared_claim_used_by_more_pods_than_replicas_is_a_warning(tmp_path: Path) -> None:
    text = (
        DRA_EXAMPLE.read_text(encoding="utf-8")
        .replace(
            "        nodeSelector: {pool: h100}\n",
            "        nodeSelector: {pool: h100}\n        sharing: {strategy: time-slicing, replicas: 2}\n",
        )
        .replace("        gpus: 8\n        replicas: 2\n", "        gpus: 1\n        replicas: 2\n")
    )
    shared = load_fleet(text, name="fleet.yaml").cluster("train")
    assert shared is not None
    # the shared claim's name carries its class config's digest (compile/backends/dra/claims.py)
    shared_claim = claim_name(shared, next(w for w in shared.workloads if w.name == "llm-finetune"))

    def edit(files: Files) -> None:
        claims = [d for d in files["dra.json"]["items"] if d["metadata"].get("name", "").startswith("llm-finetune.")]
        template = claims[0]
        template.update(kind="ResourceClaim", spec=template["spec"]["spec"])
        template["metadata"]["name"] = shared_claim
        template["spec"]["devices"]["requests"][0]["exactly"]["count"] = 1
        template["status"] = {"reservedFor": [{"name": f"llm-finetune-{i}", "resource": "pods"} for i in range(3)]}
        for device_class in files["dra.json"]["items"]:
            if device_class["metadata"]["name"] == "h100.gpu.gpustack-gen.dev":
                device_class["spec"]["config"] = [
                    {
                        "opaque": {
                            "driver": "gpu.nvidia.com",
                            "parameters": {
                                "apiVersion": "resource.nvidia.com/v1beta1",
                                "kind": "GpuConfig",
                                "sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Default"}},
                            },
                        }
                    }
                ]

    state = read_state_dir(copy_state(HEALTHY, tmp_path / "state", edit), shared)
    result = verify_cluster(shared, state, fleet_label="fleet.yaml")
    (finding,) = [f for f in result.findings if f.check == "dra-objects"]
    assert (finding.severity, finding.subject, finding.expected, finding.actual) == (
        Severity.WARNING,
        f"ResourceClaim research/{shared_claim}",
        2,
        3,
    )
    assert "no DRA object enforces the pool's replicas" in finding.hint
    # the shared pool's slices count a device per GPU, as the model does
    assert [f for f in result.findings if f.check == "capacity-mismatch"] == []


@pytest.mark.parametrize("kubernetes", ["1.32.4", "1.33.1"])
def test_slices_and_claims_of_an_earlier_api_version_read_alike(kubernetes: str, tmp_path: Path) -> None:
    """kubectl writes the version the API server prefers: v1beta1 slices nest a device's fields under ``basic``,
    and v1beta1 claims carry a request's fields on the request; the render is in the cluster's version."""
    text = DRA_EXAMPLE.read_text(encoding="utf-8").replace('kubernetes: "1.34.2"', f'kubernetes: "{kubernetes}"')
    older = load_fleet(text, name="fleet.yaml").cluster("train")
    assert older is not None

    def edit(files: Files) -> None:
        for index, piece in enumerate(files["resourceslices.json"]["items"]):
            files["resourceslices.json"]["items"][index] = node_slice(
                piece["spec"]["nodeName"], piece["spec"]["devices"], "resource.k8s.io/v1beta1"
            )
        for document in files["dra.json"]["items"]:
            document["apiVersion"] = "resource.k8s.io/v1beta1"
            spec = document["spec"].get("spec", document["spec"])
            for request in spec.get("devices", {}).get("requests", []):
                request.update(request.pop("exactly"))

    state = read_state_dir(copy_state(HEALTHY, tmp_path / "state", edit), older)
    assert verify_cluster(older, state, fleet_label="fleet.yaml").findings == ()


def test_a_gpu_operator_cluster_never_reads_slices(tmp_path: Path) -> None:
    from verify_helpers import verify

    def edit(files: Files) -> None:
        files["resourceslices.json"] = json.loads((DATA / HEALTHY / "resourceslices.json").read_text(encoding="utf-8"))

    result = verify("train", "train-healthy", tmp_path / "state", edit)
    assert (result.findings, result.exit_code) == ((), ExitCode.OK)
