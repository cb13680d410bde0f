"""Property: for any pair of valid fleets that differ by one or several changes of the kinds a platform
team makes, the plan replays on the model of the upstream controllers without breaking an invariant.

A change that relabels nodes needs the old config kept (``retired``): the generator adds exactly the
entries the retention rule asks for, as a user following the plan's error would.

The cluster also runs what the fleet does not say (:mod:`sim.extras`), drawn over the old fleet: node groups an
autoscaler grows for Pending GPU pods, PodDisruptionBudgets over the workloads, pods without a controller holding
a pool's GPUs, and pools whose nodes run without the device-plugin config label. Against those, stopping at a
pre-flight check (which says what blocks and what to do) is a correct outcome; a plan that goes past its
pre-flights must finish without losing a pool's GPUs or stalling.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sim.cluster import Blocked, SimulationError
from sim.simulator import Simulation

from gpustack_gen import FleetError, load_fleet
from gpustack_gen.change import Action, analyse
from gpustack_gen.change.context import ClusterChange
from gpustack_gen.change.rules.retention import retired_entries
from gpustack_gen.compile.config_names import config_names
from gpustack_gen.model.fleet import DEFAULT_DEVICE_PLUGIN_KEY, Cluster
from gpustack_gen.workdir import Paths

Edit = Callable[[dict[str, Any]], None]

A100_LAYOUTS = [
    {"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 2},
    {"3g.20gb": 2},
    {"1g.5gb": 7},
    {"4g.20gb": 1, "2g.10gb": 1, "1g.5gb": 1},
]


def base(single: bool) -> dict[str, Any]:
    a100_sharing = (
        {"strategy": "mig", "config": "all-1g.5gb"} if single else {"strategy": "mig", "layout": A100_LAYOUTS[0]}
    )
    cluster: dict[str, Any] = {
        "name": "prod",
        "kubernetes": "1.30.8",
        "nodePools": [
            {
                "name": "t4",
                "gpu": "tesla-t4",
                "nodes": 2,
                "nodeSelector": {"pool": "t4"},
                "sharing": {"strategy": "time-slicing", "replicas": 4},
            },
            {
                "name": "a100",
                "gpu": "a100-40gb",
                "nodes": 1,
                "gpusPerNode": 2,
                "nodeSelector": {"pool": "a100"},
                "sharing": a100_sharing,
            },
            {"name": "h100", "gpu": "h100-80gb", "nodes": 1, "gpusPerNode": 2, "nodeSelector": {"pool": "h100"}},
        ],
        "workloads": [
            {"name": "api", "namespace": "ml", "pool": "t4", "replicas": 2},
            {"name": "notebook", "namespace": "research", "pool": "a100", "replicas": 1},
            {"name": "trainer", "namespace": "research", "pool": "h100"},
        ],
    }
    if not single:
        cluster["mig"] = {"strategy": "mixed"}
        cluster["workloads"][1]["migProfile"] = "1g.5gb"
    return {
        "apiVersion": "gpustack-gen/v1alpha1",
        "kind": "Fleet",
        "defaults": {"operator": {"version": "v25.3.3", "cdi": {"enabled": True, "default": True}}},
        "clusters": [cluster],
    }


def _cluster(data: dict[str, Any]) -> dict[str, Any]:
    cluster: dict[str, Any] = data["clusters"][0]
    return cluster


def _pool(data: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((p for p in _cluster(data)["nodePools"] if p["name"] == name), None)


def _workload(data: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((w for w in _cluster(data)["workloads"] if w["name"] == name), None)


def _t4_sharing(sharing: dict[str, Any]) -> Edit:
    def edit(data: dict[str, Any]) -> None:
        pool = _pool(data, "t4")
        if pool is not None:
            pool["sharing"] = sharing

    return edit


def _a100_layout(layout: dict[str, int]) -> Edit:
    def edit(data: dict[str, Any]) -> None:
        pool, notebook = _pool(data, "a100"), _workload(data, "notebook")
        if pool is None or _cluster(data).get("mig") is None:
            return
        pool["sharing"] = {"strategy": "mig", "layout": layout}
        if notebook is not None:
            notebook["pool"] = "a100"
            notebook["migProfile"] = next(iter(layout))

    return edit


def _a100_whole(data: dict[str, Any]) -> None:
    pool, notebook = _pool(data, "a100"), _workload(data, "notebook")
    if pool is not None:
        pool["sharing"] = {"strategy": "none"}
    if notebook is not None:
        notebook.pop("migProfile", None)


def _h100_mig(data: dict[str, Any]) -> None:
    pool, trainer = _pool(data, "h100"), _workload(data, "trainer")
    if pool is None:
        return
    pool["sharing"] = {"strategy": "mig", "config": "all-1g.10gb"}
    if trainer is not None and _cluster(data).get("mig"):
        trainer["migProfile"] = "1g.10gb"


def _toggle_mig_strategy(data: dict[str, Any]) -> None:
    cluster = _cluster(data)
    if cluster.get("mig"):
        cluster.pop("mig")
        for workload in cluster["workloads"]:
            workload.pop("migProfile", None)
    else:
        cluster["mig"] = {"strategy": "mixed"}


def _operator_bump(data: dict[str, Any]) -> None:
    data["defaults"]["operator"] = {"version": "v26.7.0", "cdi": {"enabled": True}}


def _driver_pin(data: dict[str, Any]) -> None:
    operator = data["defaults"]["operator"]
    if "driver" in operator:
        operator.pop("driver")
    else:
        operator["driver"] = {"version": "570.172.08"}


def _add_pool(data: dict[str, Any]) -> None:
    if _pool(data, "l4") is None:
        _cluster(data)["nodePools"].append(
            {
                "name": "l4",
                "gpu": "l4",
                "nodes": 1,
                "nodeSelector": {"pool": "l4"},
                "sharing": {"strategy": "time-slicing", "replicas": 2},
            }
        )
        _cluster(data)["workloads"].append({"name": "embed", "namespace": "ml", "pool": "l4"})


def _remove_h100(data: dict[str, Any]) -> None:
    cluster = _cluster(data)
    cluster["nodePools"] = [p for p in cluster["nodePools"] if p["name"] != "h100"]
    cluster["workloads"] = [w for w in cluster["workloads"] if w["pool"] != "h100"]


def _move_api(data: dict[str, Any]) -> None:
    api = _workload(data, "api")
    if api is not None and _pool(data, "h100") is not None:
        api["pool"] = "h100"
        api["replicas"] = 1


def _rename_selector(data: dict[str, Any]) -> None:
    pool = _pool(data, "t4")
    if pool is not None:
        pool["nodeSelector"] = {"pool": "t4", "tier": "serving"}


def _rename_t4(data: dict[str, Any]) -> None:
    pool, api = _pool(data, "t4"), _workload(data, "api")
    if pool is not None:
        pool["name"] = "serving"
        if api is not None and api["pool"] == "t4":
            api["pool"] = "serving"


def _h100_selector_value(data: dict[str, Any]) -> None:
    pool = _pool(data, "h100")
    if pool is not None:
        pool["nodeSelector"] = {"pool": "hopper"}


EDITS: dict[str, Edit] = {
    "replicas-3": _t4_sharing({"strategy": "time-slicing", "replicas": 3}),
    "replicas-6": _t4_sharing({"strategy": "time-slicing", "replicas": 6}),
    "rename": _t4_sharing({"strategy": "time-slicing", "replicas": 4, "renameByDefault": True}),
    "mps": _t4_sharing({"strategy": "mps", "replicas": 4}),
    "sharing-off": _t4_sharing({"strategy": "none"}),
    **{f"layout-{i}": _a100_layout(layout) for i, layout in enumerate(A100_LAYOUTS[1:], 1)},
    "a100-whole": _a100_whole,
    "h100-mig": _h100_mig,
    "mig-strategy": _toggle_mig_strategy,
    "operator-bump": _operator_bump,
    "driver-pin": _driver_pin,
    "pool-added": _add_pool,
    "pool-removed": _remove_h100,
    "workload-moved": _move_api,
    "t4-selector": _rename_selector,
    "h100-to-h200": lambda data: (_pool(data, "h100") or {}).update(gpu="h200-141gb"),
    "t4-renamed": _rename_t4,
    "h100-selector-value": _h100_selector_value,
}


# What a cluster runs beyond the fleet, over the old fleet's pools (sim/extras.py's keys).
POOLS = ("t4", "a100", "h100")


def _spare(cluster: Cluster, pool: str, resource: str) -> int:
    """What of ``resource`` the pool has beyond its workloads' pods (0 when the pool is gone or lacks it)."""
    found = next((p for p in cluster.pools if p.name == pool), None)
    if found is None:
        return 0
    used = sum(cluster.workload_total(w).get(resource, 0) for w in cluster.workloads if w.pool == pool)
    return cluster.resources_total(found).get(resource, 0) - used


@st.composite
def beyond_the_fleet(draw: st.DrawFn, old_data: dict[str, Any], new: Cluster) -> dict[str, Any]:
    cluster = load_fleet(old_data).clusters[0]
    pools = [p for p in cluster.pools if p.name in POOLS]
    names = [p.name for p in pools]
    extras: dict[str, Any] = {}
    scaled = draw(st.lists(st.sampled_from(names), unique=True, max_size=2)) if names else []
    if scaled:
        extras["autoscaler"] = {"pools": scaled}
    workloads = [f"{w.namespace}/{w.name}" for w in cluster.workloads if w.replicas > 0]
    budgets = draw(st.lists(st.sampled_from(workloads), unique=True, max_size=2)) if workloads else []
    if budgets:
        replicas = {f"{w.namespace}/{w.name}": w.replicas for w in cluster.workloads}
        extras["podDisruptionBudgets"] = [
            {"workload": w, "minAvailable": draw(st.integers(0, replicas[w]), label=f"minAvailable {w}")}
            for w in budgets
        ]
    # A bare pod takes a GPU the fleet's workloads do not need, before and after (else they are Pending for it).
    room = [
        (p.name, r)
        for p in pools
        for r in sorted(cluster.resources_per_node(p))
        if _spare(cluster, p.name, r) > 0
        and (not any(q.name == p.name for q in new.pools) or _spare(new, p.name, r) > 0)
    ]
    bare = draw(st.lists(st.sampled_from(room), unique=True, max_size=1)) if room else []
    if bare:
        pool, resource = bare[0]
        extras["barePods"] = [{"name": f"research/scratch-{pool}", "pool": pool, "requests": {resource: 1}}]
    # Only a pool whose own config is what `any` holds can run unlabelled and still serve what the fleet says.
    configs = {
        k: {f: v for f, v in c.items() if f != "flags"} for k, c in config_names(cluster).device_plugin_configs.items()
    }
    unlabelled_ok = [name for name in names if configs.get(name) == configs[DEFAULT_DEVICE_PLUGIN_KEY]]
    unlabelled = draw(st.lists(st.sampled_from(unlabelled_ok), unique=True, max_size=1)) if unlabelled_ok else []
    if unlabelled:
        extras["unlabelledPools"] = unlabelled
    return extras


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(
    single=st.booleans(),
    before=st.lists(st.sampled_from(sorted(EDITS)), max_size=2, unique=True),
    change=st.lists(st.sampled_from(sorted(EDITS)), min_size=1, max_size=3, unique=True),
    data=st.data(),
)
def test_any_plan_replays_without_breaking_an_invariant(
    upstream: Path,
    tmp_path_factory: pytest.TempPathFactory,
    single: bool,
    before: list[str],
    change: list[str],
    data: st.DataObject,
) -> None:
    old_data = base(single)
    for name in before:
        EDITS[name](old_data)
    new_data = copy.deepcopy(old_data)
    for name in change:
        EDITS[name](new_data)
    try:
        old = load_fleet(old_data)
        new = load_fleet(new_data)
    except FleetError:
        assume(False)
        return
    assume(old.clusters != new.clusters)
    retired = retired_entries(ClusterChange(old.clusters[0], new.clusters[0], Paths()))
    if retired:
        _cluster(new_data)["retired"] = retired
        new = load_fleet(new_data)
    analysis = analyse(old.clusters[0], new.clusters[0])
    assume(not analysis.errors)  # a change the plan refuses (a rename that also reshapes the pool...) is said so
    # One source: every step comes from a rule with a finding, and every finding's actions are in the plan.
    step_rules = {rule for step in analysis.steps for rule in step.rule.split(",")}
    assert step_rules <= {f.rule for f in analysis.findings}
    assert {f.rule for f in analysis.findings if f.actions} <= step_rules
    extras = data.draw(beyond_the_fleet(old_data, new.clusters[0]), label="beyond the fleet")
    simulation = Simulation(upstream, tmp_path_factory.mktemp("rollout"), old, new, "prod", extras)
    try:
        simulation.run()
    except SimulationError:
        # A pre-flight that stops the plan before it touches what blocks is the plan working, provided there
        # is something to block it (a check failing on a cluster without one would stop every user).
        stopped = simulation.failed_step
        if stopped is None or (stopped.action is not Action.CHECK and not isinstance(simulation.failure, Blocked)):
            raise
        assert extras.get("podDisruptionBudgets") or extras.get("barePods") or extras.get("unlabelledPools")
