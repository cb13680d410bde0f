"""nodeGroups and alerts: typed and strict like the rest of the file, and merged over the fleet defaults."""

from __future__ import annotations

from fleet_text import edit, load, problems

from gpustack_gen.model.fleet import Alerts


def test_defaults_write_neither() -> None:
    (cluster,) = load(edit({})).clusters
    assert cluster.node_group_provider is None
    assert cluster.alerts == Alerts()
    assert not cluster.alerts.enabled


def test_cluster_settings_merge_over_the_fleet_defaults_field_by_field() -> None:
    text = edit(
        {
            4: "operator: {version: v25.3.3}\n"
            "nodeGroups: {provider: karpenter}\n"
            "alerts: {enabled: true, namespace: obs, ruleLabels: {release: kps}, gpuMemoryPercent: 80}",
            8: "containerRuntime: containerd\nalerts: {nodeAtZeroFor: 15m, ruleLabels: {team: gpu}}\nnodeGroups: {provider: eksctl}",
        }
    )
    (cluster,) = load(text).clusters
    assert cluster.node_group_provider == "eksctl"
    assert cluster.alerts == Alerts(
        enabled=True, namespace="obs", rule_labels=(("team", "gpu"),), node_at_zero_for="15m", gpu_memory_percent=80
    )


def test_an_unknown_provider_is_located() -> None:
    (problem,) = problems(edit({8: "containerRuntime: containerd\nnodeGroups: {provider: karpentr}"}))
    assert (problem.line, problem.path) == (9, "clusters[0].nodeGroups.provider")
    assert "karpenter" in problem.message + problem.hint


def test_alert_settings_are_strict() -> None:
    (problem,) = problems(edit({8: "containerRuntime: containerd\nalerts: {enabled: 'yes'}"}))
    assert (problem.line, problem.path) == (9, "clusters[0].alerts.enabled")
    (problem,) = problems(edit({8: "containerRuntime: containerd\nalerts: {nodeAtZeroFor: 10 minutes}"}))
    assert problem.path == "clusters[0].alerts.nodeAtZeroFor"
    (problem,) = problems(edit({8: "containerRuntime: containerd\nalerts: {gpuMemoryPercent: 20}"}))
    assert problem.path == "clusters[0].alerts.gpuMemoryPercent"
    (problem,) = problems(edit({8: "containerRuntime: containerd\nalerts: {enabeld: true}"}))
    assert "did you mean 'enabled'?" in problem.hint


def test_rule_labels_must_be_labels() -> None:
    (problem,) = problems(edit({8: "containerRuntime: containerd\nalerts: {ruleLabels: {release: 'not ok'}}"}))
    assert problem.path.startswith("clusters[0].alerts.ruleLabels")
    assert problem.hint == "e.g. release: kube-prometheus-stack"


def test_an_aks_taint_without_a_value_warns_at_the_taint() -> None:
    text = edit(
        {
            8: "containerRuntime: containerd\nnodeGroups: {provider: aks}",
            15: "nodeSelector: {pool: pool}\ntaints: [{key: nvidia.com/gpu}]",
        }
    )
    (warning,) = load(text).warnings
    assert (warning.line, warning.path) == (17, "clusters[0].nodePools[0].taints[0]")
    assert "value: present" in warning.hint
    with_value = text.replace("{key: nvidia.com/gpu}", "{key: nvidia.com/gpu, value: present}")
    assert not load(with_value).warnings
    assert not load(text.replace("provider: aks", "provider: karpenter")).warnings
