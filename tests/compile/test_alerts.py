"""Alerts from intent: the PrometheusRule against the pinned CRD, promtool's checks, and promtool unit tests on
synthetic series of the write-up's cluster: one T4 node at 0 for an hour pages naming that node; healthy series
fire nothing; a node the plan has cordoned does not page."""

from __future__ import annotations

import copy
import io
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from golden import assert_golden
from jsonschema import Draft7Validator  # type: ignore[import-untyped]
from ruamel.yaml import YAML
from test_gitops import strict_json_schema

from gpustack_gen import load_fleet, render
from gpustack_gen.compile.alerts.promql import label_metric_name, sanitized
from gpustack_gen.model import Fleet
from gpustack_gen.validate.prometheus_rule import check_prometheus_rule

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLE = ROOT / "examples" / "node-groups" / "fleet.yaml"
MAIN_EXAMPLE = ROOT / "examples" / "fleet.yaml"
GOLDEN = Path(__file__).resolve().parent / "golden" / "alerts"
VERIFY = "gpustack-gen verify examples/node-groups/fleet.yaml --cluster prod"
MINUTES = 90
ALERTS = (
    "GPUNodeAdvertisesNoGPUs",
    "GPUNodeDevicesUnhealthy",
    "GPUPoolBelowIntent",
    "GPUMemoryNearlyFull",
    "GPUPoolNodesNotSeen",
    "GPUDevicePluginUnavailable",
)
T4 = 'label_node_kubernetes_io_instance_type="g4dn.xlarge"'


def _yaml() -> YAML:
    return YAML(typ="safe")


def _rule_document(fleet: Fleet, cluster: str) -> dict[str, Any]:
    (document,) = _yaml().load_all(render(fleet, [cluster])[f"{cluster}/alerts.yaml"].text)  # the written text
    return dict(document)


def example() -> Fleet:
    return load_fleet(EXAMPLE, name="examples/node-groups/fleet.yaml")


def with_alerts(path: Path, **settings: Any) -> Fleet:
    data = _yaml().load(path.read_text(encoding="utf-8"))
    data.setdefault("defaults", {})["alerts"] = {"enabled": True, **settings}
    return load_fleet(data)


def test_kube_state_metrics_names() -> None:
    assert sanitized("nvidia.com/mig-1g.10gb.me") == "nvidia_com_mig_1g_10gb_me"
    assert label_metric_name("nvidia.com/mig.config.state") == "label_nvidia_com_mig_config_state"
    assert label_metric_name("feature.node.kubernetes.io/pci-10de.present") == (
        "label_feature_node_kubernetes_io_pci_10de_present"
    )
    assert label_metric_name("team/gpuPool") == "label_team_gpu_pool"  # toSnakeCase


def test_the_example_matches_its_golden() -> None:
    bundle = render(example())
    text = "".join(f"# ==> {p}\n{bundle[p].text}" for p in sorted(bundle) if p.endswith("alerts.yaml"))
    assert_golden(text, GOLDEN / "node-groups-example.yaml")


def test_no_alerts_unless_asked() -> None:
    assert not [p for p in render(load_fleet(MAIN_EXAMPLE)) if p.endswith("alerts.yaml")]


def test_every_rule_names_the_verify_command_of_its_cluster() -> None:
    fleet = example()
    for cluster in ("prod", "stage"):
        document = _rule_document(fleet, cluster)
        rules = [r for g in document["spec"]["groups"] for r in g["rules"]]
        assert rules
        for rule in rules:
            assert rule["labels"]["cluster"] == cluster
            assert (
                f"gpustack-gen verify examples/node-groups/fleet.yaml --cluster {cluster}"
                in rule["annotations"]["runbook"]
            )
            assert rule["annotations"]["description"]


def test_the_header_says_which_labels_to_allowlist() -> None:
    bundle = render(example())
    assert "--metric-labels-allowlist=nodes=[node.kubernetes.io/instance-type]" in bundle["prod/alerts.yaml"].text
    assert "--metric-labels-allowlist=nodes=[karpenter.sh/nodepool]" in bundle["stage/alerts.yaml"].text
    train = render(with_alerts(MAIN_EXAMPLE), ["train"])["train/alerts.yaml"].text
    assert "nodes=[nvidia.com/mig.config.state,pool]" in train


def test_a_dra_cluster_has_no_allocatable_rules() -> None:
    fleet = with_alerts(ROOT / "examples" / "dra" / "fleet.yaml")
    for cluster in fleet.clusters:
        text = render(fleet, [cluster.name])[f"{cluster.name}/alerts.yaml"].text
        assert "GPUNodeAdvertisesNoGPUs" not in text
        assert "No allocatable rules for" in text
        assert "GPUDevicePluginUnavailable" in text


def test_the_validate_layer_refuses_a_broken_rule() -> None:
    document = _rule_document(example(), "prod")
    document["spec"]["groups"].append(copy.deepcopy(document["spec"]["groups"][0]))
    document["spec"]["groups"][0]["rules"][0]["for"] = "10 minutes"
    paths = [f.path for f in check_prometheus_rule(document)]
    assert paths == ["spec.groups[0].rules[0].for", "spec.groups[1].name"]


# --- conformance with the prometheus-operator CRD ------------------------------------------------------------


@pytest.fixture(scope="module")
def rule_validator(upstream: Path) -> Draft7Validator:
    path = upstream / "monitoring" / "prometheus-operator-v0.93.0-monitoring.coreos.com_prometheusrules.yaml"
    crd = _yaml().load(path.read_text(encoding="utf-8"))
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1" and v.get("served")]
    # No check_schema(): the CRD's partial_response_strategy pattern is Go syntax Python's re refuses; no rule sets it.
    return Draft7Validator(strict_json_schema(version["schema"]["openAPIV3Schema"]))


def _every_rule_document() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for fleet in (example(), with_alerts(MAIN_EXAMPLE), with_alerts(ROOT / "examples" / "hami" / "fleet.yaml")):
        for cluster in fleet.clusters:
            found.append((cluster.name, _rule_document(fleet, cluster.name)))
    return found


def test_the_rules_conform_to_the_crd(rule_validator: Draft7Validator) -> None:
    for where, document in _every_rule_document():
        errors = [f"{list(e.path)}: {e.message}" for e in rule_validator.iter_errors(document)]
        assert not errors, f"{where}: {errors[:3]}"


def test_the_converted_crd_does_refuse_a_wrong_rule(rule_validator: Draft7Validator) -> None:
    document = _rule_document(example(), "prod")
    document["spec"]["groups"][0]["rules"][0]["for"] = "10 minutes"
    assert not rule_validator.is_valid(document)
    del document["spec"]["groups"][0]["rules"][0]["for"]
    document["spec"]["groups"][0]["rules"][0]["fro"] = "10m"
    assert not rule_validator.is_valid(document)


# --- promtool ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        pytest.skip("promtool not found: it comes with Debian's prometheus package (apt-get install prometheus)")
    return found


def _write(path: Path, data: Any) -> Path:
    stream = io.StringIO()
    YAML().dump(data, stream)
    path.write_text(stream.getvalue(), encoding="utf-8")
    return path


def _rules_file(tmp_path: Path, fleet: Fleet, cluster: str) -> Path:
    """promtool reads rule groups, not a PrometheusRule: the object's spec."""
    return _write(tmp_path / f"{cluster}-rules.yaml", _rule_document(fleet, cluster)["spec"])


def _run(promtool: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([promtool, *args], capture_output=True, text=True, check=False, timeout=120)


def test_promtool_checks_every_rule_file(promtool: str, tmp_path: Path) -> None:
    for fleet in (example(), with_alerts(MAIN_EXAMPLE), with_alerts(ROOT / "examples" / "hami" / "fleet.yaml")):
        for cluster in fleet.clusters:
            result = _run(promtool, "check", "rules", str(_rules_file(tmp_path, fleet, cluster.name)))
            assert result.returncode == 0, result.stdout + result.stderr


def _t4_node(name: str, allocatable: str, unschedulable: str = f"0x{MINUTES}") -> list[dict[str, str]]:
    """One node of prod's T4 pool: its labels, what it advertises, whether it is cordoned, its GPU's memory."""
    series = [
        {"series": f'kube_node_labels{{node="{name}",{T4}}}', "values": f"1x{MINUTES}"},
        {"series": f'kube_node_spec_unschedulable{{node="{name}"}}', "values": unschedulable},
        {"series": f'DCGM_FI_DEV_FB_USED{{Hostname="{name}",gpu="0"}}', "values": f"2000x{MINUTES}"},
        {"series": f'DCGM_FI_DEV_FB_FREE{{Hostname="{name}",gpu="0"}}', "values": f"12500x{MINUTES}"},
        {"series": f'DCGM_FI_DEV_FB_RESERVED{{Hostname="{name}",gpu="0"}}', "values": f"430x{MINUTES}"},
    ]
    if allocatable:
        series.append(
            {
                "series": f'kube_node_status_allocatable{{node="{name}",resource="nvidia_com_gpu",unit="integer"}}',
                "values": allocatable,
            }
        )
    return series


PLUGIN = {
    "series": 'kube_daemonset_status_number_unavailable{namespace="gpu-operator",daemonset="nvidia-device-plugin-daemonset"}',
    "values": f"0x{MINUTES}",
}
HEALTHY = f"4x{MINUTES}"
RUNBOOK = (
    f"Run {VERIFY} from the fleet's repository: it checks each node of cluster prod against the fleet and names "
    "the likely cause and the fix."
)


def _silent(eval_time: str, *alerts: str) -> list[dict[str, Any]]:
    return [{"eval_time": eval_time, "alertname": name, "exp_alerts": []} for name in alerts]


def _unit_test(
    promtool: str,
    tmp_path: Path,
    series: list[dict[str, str]],
    alert_tests: list[dict[str, Any]],
    fleet: Fleet | None = None,
    cluster: str = "prod",
) -> None:
    rules = _rules_file(tmp_path, fleet or example(), cluster)
    test = {
        "rule_files": [rules.name],
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": series, "alert_rule_test": alert_tests}],
    }
    result = _run(promtool, "test", "rules", str(_write(tmp_path / "test.yaml", test)))
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_write_ups_node_at_zero_for_an_hour_pages_naming_it(promtool: str, tmp_path: Path) -> None:
    series = [*_t4_node("t4-a", f"4 4 0x{MINUTES - 2}"), *_t4_node("t4-b", HEALTHY), *_t4_node("t4-c", HEALTHY), PLUGIN]
    node_alert = {
        "exp_labels": {"severity": "critical", "cluster": "prod", "pool": "t4", "node": "t4-a"},
        "exp_annotations": {
            "summary": "Node t4-a of pool t4 in cluster prod advertises no GPUs",
            "description": "The fleet says each node of pool t4 advertises 4 nvidia.com/gpu; node t4-a has advertised "
            "none for 10m (its device plugin did not register, or lost the GPUs).",
            "runbook": RUNBOOK,
        },
    }
    pool_alert = {
        "exp_labels": {"severity": "warning", "cluster": "prod", "pool": "t4", "resource": "nvidia.com/gpu"},
        "exp_annotations": {
            "summary": "Pool t4 in cluster prod advertises fewer nvidia.com/gpu than the fleet says",
            "description": "The pool's nodes advertise 8 nvidia.com/gpu together; the fleet says 4 per node.",
            "runbook": node_alert["exp_annotations"]["runbook"],
        },
    }
    _unit_test(
        promtool,
        tmp_path,
        series,
        [
            *_silent("5m", *ALERTS),  # inside the for window: pending, not firing
            {"eval_time": "60m", "alertname": "GPUNodeAdvertisesNoGPUs", "exp_alerts": [node_alert]},
            {"eval_time": "60m", "alertname": "GPUPoolBelowIntent", "exp_alerts": [pool_alert]},
            *_silent(
                "60m",
                "GPUNodeDevicesUnhealthy",
                "GPUMemoryNearlyFull",
                "GPUPoolNodesNotSeen",
                "GPUDevicePluginUnavailable",
            ),
        ],
    )


def test_a_node_whose_plugin_never_registered_pages_too(promtool: str, tmp_path: Path) -> None:
    """No allocatable series at all: the kubelet never had the resource."""
    series = [*_t4_node("t4-a", HEALTHY), *_t4_node("t4-new", ""), PLUGIN]
    expected = [{"node": "t4-new"}]
    _unit_test(
        promtool,
        tmp_path,
        series,
        [
            {
                "eval_time": "30m",
                "alertname": "GPUNodeAdvertisesNoGPUs",
                "exp_alerts": [
                    {
                        "exp_labels": {"severity": "critical", "cluster": "prod", "pool": "t4", **e},
                        "exp_annotations": {
                            "summary": "Node t4-new of pool t4 in cluster prod advertises no GPUs",
                            "description": "The fleet says each node of pool t4 advertises 4 nvidia.com/gpu; node "
                            "t4-new has advertised none for 10m (its device plugin did not register, or lost the GPUs).",
                            "runbook": RUNBOOK,
                        },
                    }
                    for e in expected
                ],
            }
        ],
    )


def test_healthy_series_fire_nothing(promtool: str, tmp_path: Path) -> None:
    series = [*_t4_node("t4-a", HEALTHY), *_t4_node("t4-b", HEALTHY), *_t4_node("t4-c", HEALTHY), PLUGIN]
    _unit_test(promtool, tmp_path, series, [*_silent("30m", *ALERTS), *_silent("89m", *ALERTS)])


def test_a_node_the_plan_cordoned_does_not_page(promtool: str, tmp_path: Path) -> None:
    """t4-b is cordoned for 40 minutes, and at 0 for the first 30 (its device plugin restarting on a new config)."""
    series = [
        *_t4_node("t4-a", HEALTHY),
        *_t4_node("t4-b", f"0x30 4x{MINUTES - 31}", unschedulable=f"1x40 0x{MINUTES - 41}"),
        *_t4_node("t4-c", HEALTHY),
        PLUGIN,
    ]
    _unit_test(promtool, tmp_path, series, [*_silent("25m", *ALERTS), *_silent("45m", *ALERTS)])


def test_time_sliced_gpu_memory_nearly_full_warns(promtool: str, tmp_path: Path) -> None:
    series = [*_t4_node("t4-a", HEALTHY), *_t4_node("t4-b", HEALTHY), PLUGIN]
    series = [s for s in series if 'Hostname="t4-b"' not in s["series"]]
    series += [
        {"series": 'DCGM_FI_DEV_FB_USED{Hostname="t4-b",gpu="0"}', "values": f"14500x{MINUTES}"},
        {"series": 'DCGM_FI_DEV_FB_FREE{Hostname="t4-b",gpu="0"}', "values": f"430x{MINUTES}"},
        {"series": 'DCGM_FI_DEV_FB_RESERVED{Hostname="t4-b",gpu="0"}', "values": f"430x{MINUTES}"},
    ]
    full = {
        "exp_labels": {"severity": "warning", "cluster": "prod", "pool": "t4", "Hostname": "t4-b", "gpu": "0"},
        "exp_annotations": {
            "summary": "GPU 0 of node t4-b (pool t4) is 94.4% full",
            "description": "Pool t4 is time-sliced: pods sharing a GPU share its memory, and one pod can run the others "
            "out of memory. Above 90% the next allocation may fail.",
            "runbook": RUNBOOK,
        },
    }
    _unit_test(
        promtool, tmp_path, series, [{"eval_time": "10m", "alertname": "GPUMemoryNearlyFull", "exp_alerts": [full]}]
    )


def plugin_alert(runbook: str) -> dict[str, Any]:
    """The alert of prod's device plugin with one pod unavailable."""
    return {
        "exp_labels": {
            "severity": "warning",
            "cluster": "prod",
            "namespace": "gpu-operator",
            "daemonset": "nvidia-device-plugin-daemonset",
        },
        "exp_annotations": {
            "summary": "DaemonSet gpu-operator/nvidia-device-plugin-daemonset in cluster prod has 1 unavailable pods",
            "description": "DaemonSet gpu-operator/nvidia-device-plugin-daemonset advertises the GPUs: on a node "
            "without its pod, new GPU pods stay Pending.",
            "runbook": runbook,
        },
    }


def test_an_unavailable_device_plugin_warns(promtool: str, tmp_path: Path) -> None:
    series = [*_t4_node("t4-a", HEALTHY), {**PLUGIN, "values": f"0x5 1x{MINUTES - 6}"}]
    _unit_test(
        promtool,
        tmp_path,
        series,
        [
            *_silent("15m", "GPUDevicePluginUnavailable"),
            {
                "eval_time": "30m",
                "alertname": "GPUDevicePluginUnavailable",
                "exp_alerts": [plugin_alert(RUNBOOK)],
            },
        ],
    )


def test_a_fleet_path_with_template_braces_is_shown_as_it_is(promtool: str, tmp_path: Path) -> None:
    """Annotations are Go templates: a '{{' in the fleet file's path must not start an action."""
    data = _yaml().load(EXAMPLE.read_text(encoding="utf-8"))
    data["defaults"]["alerts"]["fleetFile"] = "ops/{{ .x }}/fleet.yaml"
    fleet = load_fleet(data)
    series = [*_t4_node("t4-a", HEALTHY), {**PLUGIN, "values": f"1x{MINUTES}"}]
    expected = plugin_alert(
        "Run gpustack-gen verify 'ops/{{ .x }}/fleet.yaml' --cluster prod from the fleet's repository: it checks each "
        "node of cluster prod against the fleet and names the likely cause and the fix."
    )
    _unit_test(
        promtool,
        tmp_path,
        series,
        [{"eval_time": "30m", "alertname": "GPUDevicePluginUnavailable", "exp_alerts": [expected]}],
        fleet,
    )


def test_a_failed_mig_config_pages_on_that_node_only(promtool: str, tmp_path: Path) -> None:
    """train (examples/fleet.yaml) partitions its A100s: a node whose mig-manager failed pages, a cordoned one not."""
    state = "label_nvidia_com_mig_config_state"
    series = [
        {"series": f'kube_node_labels{{node="a100-a",label_pool="a100",{state}="failed"}}', "values": f"1x{MINUTES}"},
        {"series": f'kube_node_labels{{node="a100-b",label_pool="a100",{state}="success"}}', "values": f"1x{MINUTES}"},
        {"series": f'kube_node_labels{{node="a100-c",label_pool="a100",{state}="failed"}}', "values": f"1x{MINUTES}"},
        {"series": 'kube_node_spec_unschedulable{node="a100-c"}', "values": f"1x{MINUTES}"},
    ]
    runbook = RUNBOOK.replace("examples/node-groups/fleet.yaml", "fleet.yaml").replace("cluster prod", "cluster train")
    failed = {
        "exp_labels": {"severity": "critical", "cluster": "train", "node": "a100-a"},
        "exp_annotations": {
            "summary": "The MIG manager failed to apply nvidia.com/mig.config on node a100-a in cluster train",
            "description": "nvidia.com/mig.config.state=failed: the node's GPUs are not partitioned as its "
            "nvidia.com/mig.config label says.",
            "runbook": runbook.replace("--cluster prod", "--cluster train"),
        },
    }
    _unit_test(
        promtool,
        tmp_path,
        series,
        [
            *_silent("3m", "GPUMigConfigFailed"),
            {"eval_time": "10m", "alertname": "GPUMigConfigFailed", "exp_alerts": [failed]},
        ],
        with_alerts(MAIN_EXAMPLE),
        "train",
    )


def test_a_pool_kube_state_metrics_does_not_show_warns(promtool: str, tmp_path: Path) -> None:
    """No kube_node_labels with the pool's labels (the allowlist lacks them): its other alerts could not fire."""
    unlabelled = {"series": 'kube_node_labels{node="t4-a"}', "values": f"1x{MINUTES}"}
    seen = {
        # absent() keeps the equality matchers' labels: the one kube-state-metrics does not show.
        "exp_labels": {
            "severity": "warning",
            "cluster": "prod",
            "pool": "t4",
            "label_node_kubernetes_io_instance_type": "g4dn.xlarge",
        },
        "exp_annotations": {
            "summary": "No node of pool t4 in cluster prod is seen by the alerts",
            "description": "The fleet says pool t4 has 3 nodes, but kube-state-metrics shows no node with its labels: "
            "the pool has no nodes, or kube-state-metrics does not allowlist the labels, and the pool's other alerts "
            "cannot fire.",
            "runbook": RUNBOOK,
        },
    }
    _unit_test(
        promtool,
        tmp_path,
        [unlabelled, PLUGIN],
        [
            {"eval_time": "45m", "alertname": "GPUPoolNodesNotSeen", "exp_alerts": [seen]},
            *_silent("45m", "GPUNodeAdvertisesNoGPUs"),  # silent as said: what it would join on is missing
        ],
    )


def test_a_node_with_unhealthy_devices_warns(promtool: str, tmp_path: Path) -> None:
    """Capacity 4, allocatable 3: one time-slice replica set of the T4 is unhealthy."""
    capacity = 'kube_node_status_capacity{{node="{}",resource="nvidia_com_gpu",unit="integer"}}'
    series = [
        *[s for s in _t4_node("t4-a", "") if "allocatable" not in s["series"]],
        {
            "series": 'kube_node_status_allocatable{node="t4-a",resource="nvidia_com_gpu",unit="integer"}',
            "values": "3x90",
        },
        {"series": capacity.format("t4-a"), "values": f"4x{MINUTES}"},
        *_t4_node("t4-b", HEALTHY),
        {"series": capacity.format("t4-b"), "values": f"4x{MINUTES}"},
        PLUGIN,
    ]
    unhealthy = {
        "exp_labels": {"severity": "warning", "cluster": "prod", "pool": "t4", "node": "t4-a"},
        "exp_annotations": {
            "summary": "Node t4-a of pool t4 in cluster prod has GPUs it does not offer",
            "description": "Its capacity counts more devices than its allocatable: the device plugin reports some "
            "unhealthy (an XID error, a lost GPU), or it disconnected less than the kubelet's 5 minutes ago.",
            "runbook": RUNBOOK,
        },
    }
    _unit_test(
        promtool,
        tmp_path,
        series,
        [
            *_silent("5m", "GPUNodeDevicesUnhealthy"),
            {"eval_time": "20m", "alertname": "GPUNodeDevicesUnhealthy", "exp_alerts": [unhealthy]},
            *_silent("20m", "GPUNodeAdvertisesNoGPUs"),
        ],
    )
