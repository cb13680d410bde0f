"""One case per change rule: a fleet that changes one thing, the findings (rule, level, pool) it gives and
the plan actions in order. Message wording is checked once, in the goldens of tests/changes/."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fleets import base, changed, fleet, pool, prod

from gpustack_gen.change import analyse
from gpustack_gen.change.rules import RULE_IDS

Edit = Callable[[dict[str, Any]], object]


def _check(
    edit: Edit,
    findings: list[tuple[str, str, str | None]],
    actions: list[str],
    before: Edit | None = None,
) -> None:
    old_data = changed(before) if before else base()
    new_data = changed(lambda d: ((before or (lambda _: None))(d), edit(d)))
    old, new = fleet(old_data).clusters[0], fleet(new_data).clusters[0]
    analysis = analyse(old, new)
    assert [(f.rule, f.level.value, f.pool) for f in analysis.findings] == findings
    assert [step.action.value for step in analysis.steps] == actions


# A100 pool of two nodes, one a batch: marked, then each batch drained, relabelled, waited for and uncordoned.
MIG_RELABEL_IN_TWO_BATCHES = [
    "apply-configmaps",
    "wait",
    "check",
    "label-nodes",
    *["label-nodes", "drain", "label-nodes", "wait", "wait", "uncordon"] * 2,
    "label-nodes",
]


def _t4(**sharing: object) -> Edit:
    return lambda d: pool(d, "t4")["sharing"].update(sharing)


def _single(data: dict[str, Any]) -> None:
    prod(data)["nodePools"].pop(1)
    prod(data)["workloads"].pop(1)
    prod(data)["mig"]["strategy"] = "single"  # the device plugin refuses MPS under mixed


def _to_hami(data: dict[str, Any]) -> None:
    """On HAMi: 4 vGPUs per T4, 3 GiB per api pod."""
    prod(data)["backend"] = "hami"
    pool(data, "t4")["sharing"] = {"strategy": "hami", "split": 4}
    prod(data)["workloads"][0]["gpuMemory"] = "3Gi"


def _hami(data: dict[str, Any]) -> None:
    _single(data)
    _to_hami(data)


def _dra_ready(data: dict[str, Any]) -> None:
    """What backend dra needs (Kubernetes 1.34, GPU Operator v26.7.0) and fits (a claim shared by 4 pods at most)."""
    prod(data).update(kubernetes="1.34.2")
    data["defaults"]["operator"].update(version="v26.7.0", cdi={"enabled": True})
    prod(data)["workloads"][0].update(replicas=4)


def _on_dra(data: dict[str, Any]) -> None:
    _dra_ready(data)
    prod(data).update(backend="dra")


# Each pool in turn: off the old backend (and wait until it is gone), on the new one, its workloads, back in use.
_MOVE_TO_DRA = ["check", "drain", "label-nodes", "wait", "label-nodes", "update-workloads", "uncordon"]
_MOVE_BACK = ["check", "drain", "label-nodes", "label-nodes", "wait", "update-workloads", "uncordon"]


def _on_device_plugin(data: dict[str, Any]) -> None:
    """The T4 pool alone on the standalone chart (which has no MIG)."""
    _single(data)
    prod(data)["backend"] = "device-plugin"


# Each batch of a pool moving to the Operator: taken, drained, standalone off (waited out), Operator on, its GPUs.
_BATCH_TO_OPERATOR = ["label-nodes", "drain", "label-nodes", "label-nodes", "wait", "uncordon"]


def _dra(**settings: object) -> Edit:
    return lambda d: prod(d).update(dra=settings)


CASES: dict[str, tuple[Edit, list[tuple[str, str, str | None]], list[str], Edit | None]] = {
    "backend-switch": (
        _to_hami,
        [("backend-switch", "disruptive", None), ("workload-values", "restart", None)],
        [
            "check",
            "drain",
            "operator",
            "wait",
            "backend",
            "node-group",
            "label-nodes",
            "prune",
            "wait",
            "update-workloads",
            "uncordon",
        ],
        _single,
    ),
    "hami-settings": (
        lambda d: pool(d, "t4")["sharing"].update(split=5),
        [("hami-settings", "restart", None)],
        ["backend", "restart-device-plugin", "wait"],
        _hami,
    ),
    "hami-settings namespace": (
        lambda d: prod(d).update(hami={"namespace": "hami-system"}),
        [("hami-settings", "error", None)],
        [],
        _hami,
    ),
    "hami-settings mig.strategy": (
        lambda d: prod(d)["mig"].update(strategy="mixed"),
        [("hami-settings", "restart", None)],
        ["operator", "wait"],
        _hami,
    ),
    "device-plugin-config": (
        _t4(replicas=5),
        [("device-plugin-config", "restart", None)],
        ["apply-configmaps", "wait", "restart-device-plugin", "wait"],
        None,
    ),
    "device-plugin-config renamed": (
        _t4(renameByDefault=True),
        [("device-plugin-config", "disruptive", None), ("workload-values", "restart", None)],
        ["apply-configmaps", "wait", "check", "drain", "restart-device-plugin", "wait", "update-workloads", "uncordon"],
        None,
    ),
    "device-plugin-config mps": (
        _t4(strategy="mps"),
        [("device-plugin-config", "disruptive", None)],
        ["apply-configmaps", "wait", "check", "drain", "restart-device-plugin", "wait", "uncordon"],
        _single,
    ),
    "mps-clients": (
        lambda d: d["defaults"]["operator"]["cdi"].update(enabled=False, default=False),
        [("mps-clients", "disruptive", None), ("runtime", "restart", None)],
        ["check", "drain", "operator", "wait", "uncordon"],
        lambda d: (_single(d), pool(d, "t4")["sharing"].update(strategy="mps")),
    ),
    "mig-layout": (
        lambda d: (
            pool(d, "a100")["sharing"].update(layout={"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 1}),
            prod(d).update(
                retired={"migConfigs": [{"gpu": "a100-40gb", "layout": {"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 2}}]}
            ),
        ),
        [("mig-layout", "disruptive", "a100")],
        [
            "apply-configmaps",
            "wait",
            "node-group",
            "check",
            "label-nodes",
            "label-nodes",
            "drain",
            "label-nodes",
            "wait",
            "wait",
            "uncordon",
            "label-nodes",
            "drain",
            "label-nodes",
            "wait",
            "wait",
            "uncordon",
            "label-nodes",
        ],
        None,
    ),
    "retention": (
        lambda d: pool(d, "a100")["sharing"].update(layout={"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 1}),
        [("retention", "error", "a100"), ("mig-layout", "disruptive", "a100")],
        [
            "apply-configmaps",
            "wait",
            "node-group",
            "check",
            "label-nodes",
            "label-nodes",
            "drain",
            "label-nodes",
            "wait",
            "wait",
            "uncordon",
            "label-nodes",
            "drain",
            "label-nodes",
            "wait",
            "wait",
            "uncordon",
            "label-nodes",
        ],
        None,
    ),
    "prune": (
        lambda d: prod(d).pop("retired"),
        [("prune", "none", None)],
        ["wait", "prune"],
        lambda d: prod(d).update(
            retired={"devicePluginConfigs": {"time-slicing-4": {"strategy": "time-slicing", "replicas": 4}}}
        ),
    ),
    "mig-strategy": (
        lambda d: (
            prod(d)["mig"].update(strategy="single"),
            pool(d, "a100")["sharing"].update(layout={"1g.5gb": 7}),
            prod(d)["workloads"][1].pop("migProfile"),
            prod(d).update(
                retired={"migConfigs": [{"gpu": "a100-40gb", "layout": {"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 2}}]}
            ),
        ),
        [
            ("mig-strategy", "disruptive", None),
            ("mig-layout", "disruptive", "a100"),
            ("workload-values", "restart", None),
        ],
        [
            "apply-configmaps",
            "wait",
            "node-group",
            "check",
            "drain",
            "check",
            "label-nodes",
            "label-nodes",
            "drain",
            "operator",
            "wait",
            "label-nodes",
            "wait",
            "wait",
            "wait",
            "update-workloads",
            "uncordon",
            "uncordon",
            "label-nodes",
        ],
        None,
    ),
    "driver": (
        lambda d: d["defaults"]["operator"]["driver"].update(version="570.172.08"),
        [("driver", "disruptive", None)],
        ["check", "check", "operator", "wait"],
        None,
    ),
    "runtime": (
        lambda d: d["defaults"]["operator"]["cdi"].update(enabled=False, default=False),
        [("runtime", "restart", None)],
        ["operator", "wait"],
        None,
    ),
    "runtime containerRuntime": (
        lambda d: prod(d).update(containerRuntime="cri-o"),
        [("runtime", "none", None)],
        [],
        None,
    ),
    "operator-version": (
        lambda d: d["defaults"]["operator"].update(version="v26.7.0", cdi={"enabled": True}),
        [("driver", "disruptive", None), ("operator-version", "restart", None)],
        ["check", "operator", "wait", "wait"],
        None,
    ),
    "operator-version namespace": (
        lambda d: d["defaults"]["operator"].update(namespace="nvidia"),
        [("operator-version", "error", None)],
        [],
        None,
    ),
    "pool-added": (
        lambda d: prod(d)["nodePools"].append({"name": "l4", "gpu": "l4", "nodes": 1, "nodeSelector": {"pool": "l4"}}),
        [("pool-added", "none", "l4")],
        ["apply-configmaps", "wait", "node-group", "label-nodes", "wait"],
        None,
    ),
    "pool-removed": (
        lambda d: (
            prod(d)["nodePools"].pop(0),
            prod(d)["workloads"].pop(0),
            prod(d).update(retired={"devicePluginConfigs": {"t4": {"strategy": "time-slicing", "replicas": 4}}}),
        ),
        [("pool-removed", "disruptive", "t4"), ("workload-values", "none", None)],
        ["check", "drain", "wait"],
        None,
    ),
    "pool-gpu": (
        lambda d: pool(d, "t4").update(gpu="l4"),
        [("pool-gpu", "disruptive", "t4")],
        ["node-group", "check", "drain", "wait", "label-nodes", "wait"],
        None,
    ),
    "pool-renamed": (
        lambda d: (
            pool(d, "t4").update(name="serving"),
            prod(d)["workloads"][0].update(pool="serving"),
            prod(d).update(retired={"devicePluginConfigs": {"t4": {"strategy": "time-slicing", "replicas": 4}}}),
        ),
        [("pool-renamed", "restart", "serving")],
        ["apply-configmaps", "wait", "node-group", "label-nodes", "wait"],
        None,
    ),
    "pool-renamed gpu": (
        lambda d: (
            pool(d, "t4").update(name="serving", gpu="l4"),
            prod(d)["workloads"][0].update(pool="serving"),
            prod(d).update(retired={"devicePluginConfigs": {"t4": {"strategy": "time-slicing", "replicas": 4}}}),
        ),
        [("pool-renamed", "error", "serving")],
        [],
        None,
    ),
    "pool-renamed mps": (
        lambda d: (
            pool(d, "t4").update(name="serving"),
            prod(d)["workloads"][0].update(pool="serving"),
            prod(d).update(retired={"devicePluginConfigs": {"t4": {"strategy": "mps", "replicas": 4}}}),
        ),
        [("pool-renamed", "disruptive", "serving")],
        ["apply-configmaps", "wait", "node-group", "check", "drain", "label-nodes", "wait", "uncordon"],
        lambda d: (_single(d), pool(d, "t4")["sharing"].update(strategy="mps")),
    ),
    "pool-renamed overlapping": (
        lambda d: (
            pool(d, "t4").update(name="serving", nodeSelector={"pool": "t4", "tier": "serving"}),
            prod(d)["workloads"][0].update(pool="serving"),
            prod(d).update(retired={"devicePluginConfigs": {"t4": {"strategy": "time-slicing", "replicas": 4}}}),
        ),
        [
            ("pool-renamed", "error", "serving"),
            ("pool-removed", "disruptive", "t4"),
            ("workload-values", "restart", None),
            ("pool-added", "none", "serving"),
        ],
        ["apply-configmaps", "wait", "node-group", "label-nodes", "wait", "update-workloads", "check", "drain", "wait"],
        None,
    ),
    "mig-manager-config": (
        lambda d: prod(d)["nodePools"].append(
            {"name": "h100", "gpu": "h100-80gb", "nodes": 1, "nodeSelector": {"pool": "h100"}}
        ),
        [("mig-manager-config", "restart", None), ("pool-added", "none", "h100")],
        ["apply-configmaps", "wait", "node-group", "operator", "wait", "label-nodes", "label-nodes", "wait", "wait"],
        lambda d: (prod(d)["nodePools"].pop(1), prod(d)["workloads"].pop(1), prod(d).update(defaultSharing="none")),
    ),
    "workload-values": (
        lambda d: prod(d)["workloads"][0].update(replicas=3),
        [],
        [],
        None,
    ),
    "workload-values limits": (
        lambda d: prod(d)["workloads"][0].update(gpus=2),
        [("workload-values", "restart", None)],
        ["update-workloads"],
        None,
    ),
    "dra-move": (
        lambda d: prod(d).update(backend="dra"),
        [("dra-move", "disruptive", None), ("dra-move", "restart", "a100"), ("dra-move", "restart", "t4")],
        [
            "apply-configmaps",
            "node-group",
            "node-group",
            "backend",
            "check",
            "drain",
            "label-nodes",
            "wait",
            "label-nodes",
            "update-workloads",
            "uncordon",
            "check",
            "drain",
            "label-nodes",
            "wait",
            "label-nodes",
            "update-workloads",
            "uncordon",
            "operator",
            "wait",
            "prune",
        ],
        _dra_ready,
    ),
    "dra-move back": (
        lambda d: prod(d).update(backend="gpu-operator"),
        [("dra-move", "disruptive", None), ("dra-move", "restart", "a100"), ("dra-move", "restart", "t4")],
        [
            "apply-configmaps",
            "node-group",
            "node-group",
            "operator",
            "wait",
            "check",
            "drain",
            "label-nodes",
            "label-nodes",
            "wait",
            "update-workloads",
            "uncordon",
            "check",
            "drain",
            "label-nodes",
            "label-nodes",
            "wait",
            "update-workloads",
            "uncordon",
            "backend",
            "prune",
        ],
        _on_dra,
    ),
    "device-plugin-move": (
        lambda d: prod(d).update(backend="gpu-operator"),
        [("device-plugin-move", "disruptive", None)],
        [
            "check",
            "apply-configmaps",
            "label-nodes",
            "operator",
            "wait",
            "node-group",
            "check",
            "label-nodes",
            *_BATCH_TO_OPERATOR * 3,  # the three T4 nodes, one a batch
            "label-nodes",
            "check",
            "backend",
            "label-nodes",
        ],
        _on_device_plugin,
    ),
    "device-plugin-values": (  # the chart's checksum/config rolls its pods: the upgrade, then the new count
        _t4(replicas=2),
        [("device-plugin-values", "restart", None)],
        ["backend", "wait"],
        _on_device_plugin,
    ),
    "device-plugin-values namespace": (  # a second release there would run a second plugin on every node
        lambda d: prod(d).update(devicePlugin={"namespace": "gpu-plugins"}),
        [("device-plugin-values", "error", None)],
        [],
        _on_device_plugin,
    ),
    "device-plugin-move back": (
        lambda d: prod(d).update(backend="device-plugin"),
        [("device-plugin-move", "error", None)],
        [],
        _single,
    ),
    "dra-move with a mig layout": (
        lambda d: (
            prod(d).update(backend="dra"),
            pool(d, "a100")["sharing"].update(layout={"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 1}),
            prod(d).update(
                retired={"migConfigs": [{"gpu": "a100-40gb", "layout": {"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 2}}]}
            ),
        ),
        [("dra-move", "error", "a100")],
        [],
        _dra_ready,
    ),
    "dra-objects driver": (
        _dra(version="0.4.1"),
        [("dra-objects", "restart", None)],
        ["backend", "wait"],
        lambda d: (_on_dra(d), _dra(version="25.12.0")(d)),
    ),
    "dra-objects downgrade": (
        _dra(version="25.12.0"),
        [("dra-objects", "error", None)],
        [],
        _on_dra,
    ),
    "dra-objects namespace": (
        _dra(namespace="dra"),
        [("dra-objects", "error", None)],
        [],
        _on_dra,
    ),
    "dra-objects sharing": (  # a new shared claim (its name has the config's digest); the pool has room for both
        _t4(interval="Short"),
        [("workload-values", "restart", None), ("dra-objects", "restart", None)],
        ["apply-configmaps", "update-workloads", "prune"],
        _on_dra,
    ),
    "dra-objects sharing on a full pool": (  # the old claim holds the only GPU: stop the pods first
        _t4(interval="Short"),
        [("workload-values", "restart", None), ("dra-objects", "restart", None)],
        ["apply-configmaps", "update-workloads", "update-workloads", "prune"],
        lambda d: (_on_dra(d), pool(d, "t4").update(nodes=1)),
    ),
    "dra-objects claims in a new namespace": (  # created before the cluster folder is applied
        lambda d: prod(d)["workloads"].append({"name": "batch", "namespace": "batch", "pool": "t4", "replicas": 2}),
        [("workload-values", "restart", None), ("dra-objects", "restart", None)],
        ["apply-configmaps", "apply-configmaps", "update-workloads"],
        _on_dra,
    ),
    "dra-objects pool added": (
        lambda d: prod(d)["nodePools"].append({"name": "l4", "gpu": "l4", "nodes": 1, "nodeSelector": {"pool": "l4"}}),
        [("dra-objects", "restart", None), ("dra-objects", "none", "l4")],
        ["apply-configmaps", "node-group", "label-nodes", "wait"],
        _on_dra,
    ),
    "dra-objects mig layout": (
        lambda d: (
            pool(d, "a100")["sharing"].update(layout={"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 1}),
            prod(d).update(
                retired={"migConfigs": [{"gpu": "a100-40gb", "layout": {"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 2}}]}
            ),
        ),
        [("dra-objects", "disruptive", "a100")],
        [
            "apply-configmaps",
            "wait",
            "node-group",
            "check",
            "label-nodes",
            "label-nodes",
            "drain",
            "label-nodes",
            "wait",
            "restart-device-plugin",
            "uncordon",
            "label-nodes",
        ],
        _on_dra,
    ),
    "kubernetes-version": (
        lambda d: prod(d).update(kubernetes="1.31.4"),
        [("kubernetes-version", "none", None)],
        [],
        None,
    ),
    "kubernetes-version on cri-o with cdi off": (
        lambda d: prod(d).update(kubernetes="1.31.4"),
        [("kubernetes-version", "error", None)],
        [],
        lambda d: (prod(d).update(containerRuntime="cri-o"), d["defaults"]["operator"].update(cdi={"enabled": False})),
    ),
    "pool-nodes": (
        lambda d: pool(d, "t4").update(nodes=5),
        [("pool-nodes", "none", "t4")],
        ["node-group", "label-nodes", "wait"],
        None,
    ),
    "pool-nodes down": (
        lambda d: pool(d, "t4").update(nodes=2),
        [("pool-nodes", "none", "t4")],
        [],
        None,
    ),
    "unlabelled-nodes second pool": (
        lambda d: prod(d)["nodePools"].append({"name": "l4", "gpu": "l4", "nodes": 2, "nodeSelector": {"pool": "l4"}}),
        [
            ("unlabelled-nodes", "restart", None),
            ("device-plugin-config", "restart", None),
            ("pool-added", "none", "l4"),
        ],
        [
            "label-nodes",
            "node-group",
            "check",
            "apply-configmaps",
            "wait",
            "node-group",
            "label-nodes",
            "restart-device-plugin",
            "wait",
        ],
        _single,
    ),
    "unlabelled-nodes follow their pool": (  # `any` keeps holding t4's config: nothing to label
        _t4(replicas=5),
        [("device-plugin-config", "restart", None)],
        ["apply-configmaps", "wait", "restart-device-plugin", "wait"],
        _single,
    ),
    "unlabelled-nodes defaultSharing set": (  # the MIG pool's unlabelled nodes would take t4's time-slicing
        lambda d: prod(d).update(defaultSharing="t4"),
        [("unlabelled-nodes", "restart", None), ("device-plugin-config", "restart", None)],
        ["label-nodes", "node-group", "check", "apply-configmaps", "wait", "restart-device-plugin"],
        None,
    ),
    "node-selector": (
        lambda d: pool(d, "t4")["nodeSelector"].update(tier="gpu"),
        [("workload-values", "restart", None), ("node-selector", "none", "t4")],
        ["node-group", "label-nodes", "update-workloads"],
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule(name: str) -> None:
    edit, findings, actions, before = CASES[name]
    _check(edit, findings, actions, before)


def test_every_rule_has_a_case() -> None:
    covered = {name.split()[0] for name in CASES} | {"cluster-added", "cluster-removed"}
    assert covered == set(RULE_IDS)


def test_a_cluster_added_is_installed_and_a_removed_one_left_alone() -> None:
    new = fleet(base()).clusters[0]
    added = analyse(None, new)
    assert [(f.rule, f.level.value) for f in added.findings] == [("cluster-added", "none")]
    assert [s.action.value for s in added.steps] == [
        "apply-configmaps",
        "node-group",
        "label-nodes",
        "node-group",
        "label-nodes",
        "operator",
        "wait",
        "wait",
        "wait",
        "wait",
        "update-workloads",
        "update-workloads",
    ]
    removed = analyse(new, None)
    assert [(f.rule, f.level.value) for f in removed.findings] == [("cluster-removed", "none")]
    assert removed.steps == ()


def test_a_cluster_added_on_dra_gets_the_driver_after_the_operator() -> None:
    added = analyse(None, fleet(changed(_on_dra)).clusters[0])
    assert [(f.rule, f.level.value) for f in added.findings] == [
        ("cluster-added", "none"),
        ("dra-objects", "none"),  # the claims' namespaces
        ("dra-objects", "none"),  # the kubelet plugin restarted after the MIG layouts
    ]
    assert [s.action.value for s in added.steps] == [
        "apply-configmaps",  # the namespaces the claims go into: applying the cluster folder needs them
        "apply-configmaps",
        "node-group",  # each pool's template, before its nodes are labelled
        "label-nodes",
        "node-group",
        "label-nodes",
        "operator",
        "backend",  # the driver's release, after the Operator
        "wait",  # the ClusterPolicy
        "wait",  # the DRA kubelet plugin on every labelled node
        "wait",  # the A100s' MIG layout
        "restart-device-plugin",  # the DRA kubelet plugin again, to find the MIG devices
        "update-workloads",
        "update-workloads",
    ]


def test_a_move_between_hami_and_dra_is_refused() -> None:
    old = fleet(changed(_hami)).clusters[0]
    new = fleet(changed(_on_dra)).clusters[0]
    analysis = analyse(old, new)
    assert [(f.rule, f.level.value) for f in analysis.errors] == [("dra-move", "error")]


@pytest.mark.parametrize(
    ("before", "edit", "message", "hint"),
    [
        (
            _hami,
            lambda d: prod(d).update(hami={"namespace": "hami-system"}),
            "HAMi moves from namespace kube-system to hami-system: that is a second install beside the first, whose "
            "device plugin would run on the same nodes",
            "keep hami.namespace kube-system, or uninstall it there first: helm uninstall hami --namespace kube-system "
            "--wait --kube-context prod",
        ),
        (
            _on_dra,
            _dra(namespace="dra"),
            "the DRA driver moves from namespace nvidia-dra-driver-gpu to dra: that is a second install beside the first",
            "keep dra.namespace nvidia-dra-driver-gpu, or uninstall it there first: helm uninstall nvidia-dra-driver-gpu "
            "--namespace nvidia-dra-driver-gpu --wait --kube-context prod",
        ),
    ],
)
def test_a_backend_chart_moving_namespace_is_refused_with_the_uninstall_command(
    before: Edit, edit: Edit, message: str, hint: str
) -> None:
    old = fleet(changed(before)).clusters[0]
    new = fleet(changed(lambda d: (before(d), edit(d)))).clusters[0]
    (error,) = analyse(old, new).errors
    assert (error.message, error.hint) == (message, hint)


def test_every_rule_that_upgrades_the_operator_gives_one_step_for_a_new_chart_version() -> None:
    """An Operator bump that also changes mig.strategy: both rules ask for the same helm upgrade, which takes
    --disable-openapi-validation (the new chart's CRD hook), and the plan runs it once."""

    def bump(data: dict[str, Any]) -> None:
        data["defaults"]["operator"].update(version="v26.7.0", cdi={"enabled": True})
        prod(data)["mig"]["strategy"] = "single"
        prod(data)["nodePools"].pop(1)
        prod(data)["workloads"].pop(1)

    old, new = fleet(base()).clusters[0], fleet(changed(bump)).clusters[0]
    operator_steps = [step for step in analyse(old, new).steps if step.action.value == "operator"]
    assert len(operator_steps) == 1
    assert "--disable-openapi-validation" in (operator_steps[0].command_text or "")
    assert {"operator-version", "mig-strategy"} <= set(operator_steps[0].rule.split(","))


@pytest.mark.parametrize(
    ("edit", "before", "message"),
    [
        (lambda d: d["defaults"]["operator"]["cdi"].update(enabled=False, default=False), None, "Operator.s settings"),
        (_t4(replicas=5), None, "no rule applies them"),
        (lambda d: pool(d, "t4")["sharing"].update(split=5), _hami, "the backend.s chart or its values change"),
    ],
)
def test_a_change_no_rule_carries_out_is_an_internal_error(
    edit: Edit, before: Edit | None, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing rule must never pass as an empty plan: the completeness check names what nothing carries out."""
    from gpustack_gen.change import analysis
    from gpustack_gen.errors import InternalError

    old_data = changed(before) if before else base()
    new_data = changed(lambda d: ((before or (lambda _: None))(d), edit(d)))
    monkeypatch.setattr(analysis, "RULES", ())
    with pytest.raises(InternalError, match=message):
        analyse(fleet(old_data).clusters[0], fleet(new_data).clusters[0])


def test_a_rename_on_a_backend_that_names_objects_after_the_pool_is_refused() -> None:
    def rename(data: dict[str, Any]) -> None:
        pool(data, "t4").update(name="serving")
        prod(data)["workloads"][0].update(pool="serving")

    old, new = fleet(changed(_hami)).clusters[0], fleet(changed(lambda d: (_hami(d), rename(d)))).clusters[0]
    (refusal,) = [f for f in analyse(old, new).findings if f.rule == "pool-renamed"]
    assert refusal.level.value == "error"
    assert "backend hami is a new pool" in refusal.hint


def test_scaling_a_pool_down_names_the_drain_with_the_cluster_and_the_pool_s_timeout() -> None:
    def shrink(data: dict[str, Any]) -> None:
        pool(data, "t4").update(nodes=2, drain={"timeoutMinutes": 40})

    old, new = fleet(base()).clusters[0], fleet(changed(shrink)).clusters[0]
    (finding,) = [f for f in analyse(old, new).findings if f.rule == "pool-nodes"]
    context = new.kube_context
    assert f"kubectl --context {context} drain NODE --ignore-daemonsets --delete-emptydir-data --timeout=40m" in (
        finding.message
    )
