"""Replay a plan on the model and check the rollout invariants after every step (rollout.md §7).

    report = Simulation(upstream, tmp_path, old_fleet, new_fleet, "prod").run()

The cluster starts empty with the nodes of the old fleet's pools (and the new pools' nodes, unlabelled,
as a node group created for them); the old fleet is installed by its own plan from nothing, then the
change's plan runs. Invariants:

1. no node label names a device-plugin key or MIG config missing from the ConfigMaps;
2. no pool that has GPUs before and after advertises none between steps, unless all its nodes are drained;
3. every step's command succeeds and its check passes;
4. at the end: MIG nodes are ``success``, each pool's nodes advertise what the new capacity.yaml says,
   each workload runs the new fragment and asks only for resources a node of its pool advertises, the
   operands run the new chart's images, the ClusterPolicy holds the new settings and HAMi's kube-scheduler
   matches the control plane;
5. once the last step's check has passed (before the model lets time run on): every operand rollout the plan
   set off was seen to end by a ``rollout status``, and the driver upgrade has reached every node.

A change of the cluster's Kubernetes version is done outside the plan, before it (the plan's steps say they run
after it): the model upgrades the cluster first (``Cluster.upgrade_kubernetes``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from gpustack_gen import render
from gpustack_gen.catalog import get_gpu
from gpustack_gen.change import Action, Step, analyse
from gpustack_gen.model import Fleet
from gpustack_gen.workdir import Paths

from . import adoption, autoscaler, extras, helm
from .cluster import (
    DP_LABEL,
    DRIVER_STATE_LABEL,
    MIG_LABEL,
    MIG_STATE_LABEL,
    Cluster,
    Node,
    SimulationError,
    image_version,
    parse_config,
)
from .shell import Shell, load_documents
from .upstream import chart_values, facts_for_product

NODES_PER_POOL = 2
NFD_GPU_LABEL = "feature.node.kubernetes.io/pci-10de.present"
DRIVER_SETTLE_ROUNDS = 12  # enough to tell "one node" from "the pool"


@dataclass
class Report:
    steps_run: int = 0
    log: list[str] = field(default_factory=list)


class Simulation:
    def __init__(
        self,
        upstream: Path,
        workdir: Path,
        old: Fleet,
        new: Fleet,
        cluster: str,
        extras: dict[str, Any] | None = None,
    ) -> None:
        """``extras``: what the cluster runs beyond the fleet (:mod:`.extras`)."""
        self.extras = extras or {}
        self.upstream = upstream
        self.workdir = workdir
        self.name = cluster
        self.new = new.cluster(cluster)
        assert self.new is not None, "the model replays changes of a cluster the new fleet has"
        # A cluster only the new fleet has, with operator.adoptFrom: its running Operator is taken over; the
        # nodes are the new pools' (what import read is what the cluster runs).
        self.adopting = old.cluster(cluster) is None
        assert not self.adopting or self.new.operator.adopt_from is not None, "a new cluster joins: nothing to replay"
        self.old = self.new if self.adopting else old.cluster(cluster)
        assert self.old is not None
        render(new if self.adopting else old, [cluster]).write(workdir / "old-rendered")
        render(new, [cluster]).write(workdir / "rendered")
        self.cluster = Cluster(upstream, self.new.operator.namespace, self.old.kubernetes, self.old.container_runtime)
        self.shell = Shell(self.cluster, workdir, self.new.kube_context)
        self.shell.replicas = {f"{w.namespace}/{w.name}": w.replicas for w in self.old.workloads}
        self.report = Report()
        self.failed_step: Step | None = None  # the step whose command or check failed the run
        self.failure: SimulationError | None = None  # and how
        self._add_nodes()

    # --- set-up ---------------------------------------------------------------------------------

    def _pools(self, folder: str) -> list[dict[str, Any]]:
        (labels,) = load_documents(self.workdir / folder / self.name / "node-labels.yaml")
        (capacity,) = load_documents(self.workdir / folder / self.name / "capacity.yaml")
        sizes = {p["name"]: p for p in capacity["pools"]}
        return [{**pool, **sizes[pool["name"]]} for pool in labels["pools"]]

    def _add_nodes(self) -> None:
        """The old pools' nodes are there from the start; a new pool's nodes join when the plan creates its
        node group (its label-nodes step), carrying the pool's selector labels. A pool that changes GPU model
        gets a new node group: its new nodes join when the plan waits for the drained old ones to go."""
        self.joining: dict[str, dict[str, Any]] = {}
        self.replacing: dict[str, dict[str, Any]] = {}
        # pool -> its new side and the nodes it has now: scaled up once the change's plan runs (not its install)
        self.scaled: dict[str, tuple[dict[str, Any], int]] = {}
        self.growing: dict[str, tuple[dict[str, Any], int]] = {}
        old = {pool["name"]: pool for pool in self._pools("old-rendered")}
        for pool in old.values():
            self._join(pool)
        new = self._pools("rendered")
        # A pool that joins with a leaving pool's selector is that pool renamed: the same nodes.
        self.renamed = {
            before["name"]: pool["name"]
            for pool in new
            if pool["name"] not in old
            for before in old.values()
            if before["nodeSelector"] == pool["nodeSelector"] and before["name"] not in {p["name"] for p in new}
        }
        for pool in new:
            before = old.get(pool["name"])
            if pool["nodes"] == 0 or pool["name"] in self.renamed.values():
                continue
            if before is not None and before["gpu"] == pool["gpu"] and before["nodes"] < pool["nodes"]:
                # The node group is scaled up: its new nodes come from the template (the pool's selector only).
                self.scaled[pool["name"]] = (pool, min(before["nodes"], NODES_PER_POOL))
            if before is None or (before["gpu"] != pool["gpu"] and before["nodes"] == 0):
                self.joining[pool["name"]] = pool
            elif before["gpu"] != pool["gpu"]:
                self.replacing[pool["name"]] = pool

    def _join(self, pool: dict[str, Any], *, template_labels: bool = False, first: int = 0) -> None:
        """``template_labels``: the node group's template sets node-labels.yaml's labels, as the step said."""
        gpu = get_gpu(pool["gpu"])
        assert gpu is not None
        facts = facts_for_product(self.upstream, gpu.product_labels)
        # NFD labels a node with an NVIDIA PCI device so (the standalone chart's first affinity term,
        # k8s-device-plugin@v0.17.4 deployments/helm/nvidia-device-plugin/values.yaml:67-72).
        labels = {
            NFD_GPU_LABEL: "true",
            **pool["nodeSelector"],
            **(pool.get("labels") or {} if template_labels else {}),
        }
        for index in range(first, min(pool["nodes"], NODES_PER_POOL)):
            name = f"{pool['name']}-{'new-' if template_labels else ''}{index}"
            node = Node(name, pool["name"], facts, pool["gpusPerNode"], dict(labels), gpu_id=pool["gpu"])
            self.cluster.join(node)

    def bootstrap(self) -> None:
        """Install the old fleet from nothing with its own plan, and check it ends as its capacity says.

        An Operator installed by something else (operator.install: external) is there before the plan,
        with its chart's defaults; the plan patches it. A cluster being adopted runs the Operator as
        ``cluster.yaml``'s ``running`` says (:mod:`.adoption`)."""
        if self.adopting:
            selectors = {p.name: dict(p.node_selector) for p in self.new.pools}
            adoption.install(self.cluster, self.new.operator.release.version, self.extras["running"], selectors)
            extras.add(self.cluster, self.extras, selectors)
            return
        if self.old.operator.install == "external":
            self.cluster.namespaces.add(self.old.operator.namespace)
            self.cluster.helm_upgrade(self.old.operator.release.version, [], reuse=False, openapi_checked=False)
        install = analyse(None, self.old, Paths(rendered="old-rendered"))
        for step in install.steps:
            self._step(step, both=set())
        self.cluster.advance(600)
        # An install's plan does not wait for a driver the patch pins: the upgrade controller finishes it.
        for _ in range(DRIVER_SETTLE_ROUNDS):
            if not self.cluster.driver_upgrade.busy(self.cluster):
                break
            self.cluster.advance(600)
        self._check_end("old-rendered", self.old)
        extras.add(self.cluster, self.extras, {p.name: dict(p.node_selector) for p in self.old.pools})
        self._autoscale()

    def _autoscale(self) -> None:
        """cluster.yaml's ``autoscaler: {pools: [...]}``: those pools' node groups scale with Pending pods, their
        templates holding the old fleet's labels (node-labels.yaml) until the plan updates them."""
        pools = (self.extras.get("autoscaler") or {}).get("pools") or []
        if not pools:
            return
        shapes = {pool["name"]: pool for pool in self._pools("old-rendered")}

        def build(pool: str, name: str, labels: dict[str, str]) -> Node:
            shape = shapes[pool]
            gpu = get_gpu(shape["gpu"])
            assert gpu is not None
            facts = facts_for_product(self.upstream, gpu.product_labels)
            return Node(name, pool, facts, shape["gpusPerNode"], labels, gpu_id=shape["gpu"])

        templates = {name: {**shapes[name]["nodeSelector"], **(shapes[name].get("labels") or {})} for name in pools}
        self.cluster.autoscaler = autoscaler.Autoscaler(templates, build)

    # --- running a plan -------------------------------------------------------------------------

    def run(self, steps: Sequence[Step] | None = None) -> Report:
        self.bootstrap()
        self.cluster.unchecked.clear()  # the install has settled: the change's plan answers for what it rolls
        self.growing = dict(self.scaled)
        self.shell.replicas = {f"{w.namespace}/{w.name}": w.replicas for w in self.new.workloads}
        self.shell.repositories = {}  # the plan may run on a fresh machine, not where the cluster was installed
        if steps is None:
            analysis = analyse(None if self.adopting else self.old, self.new, Paths(rendered="rendered"))
            if analysis.errors:
                raise SimulationError("; ".join(e.message for e in analysis.errors))
            steps = analysis.steps
        for node in self.cluster.nodes.values():
            node.pool = self.renamed.get(node.pool, node.pool)
        # A pool that changes GPU model has no GPUs from its drain until its new nodes are configured: that
        # is the change (its finding says so), not a rollout fault.
        old_pools = {self.renamed.get(p.name, p.name) for p in self.old.pools if p.nodes > 0}
        both = {p.name for p in self.new.pools if p.nodes > 0} & old_pools
        both -= set(self.replacing)
        if self.new.kubernetes != self.old.kubernetes:
            self._upgrade_kubernetes(both)
        for step in steps:
            self._step(step, both)
        self._check_finished()
        self.cluster.advance(600)
        if self.joining or self.replacing or self.growing:
            raise SimulationError(
                f"end: no step creates the nodes of pool {', '.join([*self.joining, *self.replacing, *self.growing])}"
            )
        self._check_end("rendered", self.new)
        return self.report

    def _check_finished(self) -> None:
        """Each step's check shows it finished: once the last has passed, nothing the plan set off is still going."""
        if self.cluster.unchecked:
            unchecked = ", ".join(sorted(self.cluster.unchecked))
            raise SimulationError(f"end of the plan: no check saw the rollout of {unchecked} end")
        spec = self.cluster.spec
        if (
            spec is not None
            and spec["driver"].get("enabled", True)
            and spec["driver"].get("upgradePolicy", {}).get("autoUpgrade", True)
        ):
            wanted = self.cluster.driver_labels()
            for node in self.cluster.nodes.values():
                state = node.labels.get(DRIVER_STATE_LABEL)
                if state != "upgrade-done" or any(node.labels.get(k) != v for k, v in wanted.items()):
                    raise SimulationError(
                        f"end of the plan: {node.name} has not loaded driver {spec['driver'].get('version')} "
                        f"({DRIVER_STATE_LABEL}={state}): no check waited for the driver upgrade"
                    )

    def _upgrade_kubernetes(self, both: set[str]) -> None:
        """The plan of a Kubernetes upgrade runs after it (its steps say so): the model upgrades the cluster
        first, and its pools must still serve GPUs once their nodes are back."""
        where = f"the Kubernetes upgrade {self.old.kubernetes} -> {self.new.kubernetes}"
        self.cluster.upgrade_kubernetes(self.new.kubernetes)
        try:
            check_pools_advertise(self.cluster, both)
        except SimulationError as error:
            failed = sorted({f"{n.name}: {n.create_error}" for n in self.cluster.nodes.values() if n.create_error})
            raise SimulationError(f"{where}: {error}{''.join(f'; {f}' for f in failed[:1])}") from None

    def _step(self, step: Step, both: set[str]) -> None:
        where = f"step {self.report.steps_run + 1} ({step.action.value}: {step.command_text})"
        if step.action is Action.LABEL_NODES and step.pool in self.joining:
            self._join(self.joining.pop(step.pool))
        if step.action is Action.LABEL_NODES and step.pool in self.growing:
            pool, present = self.growing.pop(step.pool)
            self._join(pool, first=present)
        try:
            if step.command is None:
                self._manual(step)
            else:
                self.shell.run(step.command_text or "")
            if step.pool in self.replacing and "--for=delete nodes" in (step.command_text or ""):
                if any(n.pool == step.pool for n in self.cluster.nodes.values()):
                    raise SimulationError(f"pool {step.pool}'s old nodes are still there")
                self._join(self.replacing.pop(step.pool), template_labels=True)
            if step.verify is not None:
                self.shell.check(step.verify_text or "")
            self._check_labels()
            self._check_pools_advertise(both)
        except SimulationError as error:
            self.failed_step, self.failure = step, error
            raise type(error)(f"{where}: {error}") from None
        self.report.steps_run += 1
        self.report.log.append(where)

    def _manual(self, step: Step) -> None:
        """A step with no command says what a person does; the model does it as told."""
        if step.action is Action.NODE_GROUP:
            if self.cluster.autoscaler is not None:
                self.cluster.autoscaler.set_template(step.pool or "", step.reason)
            return
        if step.action is not Action.UPDATE_WORKLOADS:
            raise SimulationError(f"no command for {step.action.value}")
        match = re.search(r"merge (\S+) into", step.reason)
        assert match is not None, step.reason
        path = self.workdir / match.group(1)
        namespace, name = path.name.removesuffix(".yaml").split(".", 1)
        self.shell.deploy(f"{namespace}/{name}", load_documents(path)[0])

    # --- invariants -----------------------------------------------------------------------------

    def _check_labels(self) -> None:
        spec = self.cluster.spec
        if spec is None:
            return
        config = {**(spec["devicePlugin"].get("config") or {}), "name": self.cluster.mounted_device_plugin_config()}
        keys = self.cluster.configmaps[config["name"]].current if config.get("name") else {}
        mig_name = spec["migManager"]["config"].get("name")
        mig = self.cluster.configmaps.get(mig_name) if mig_name else None
        mig_configs = YAML(typ="safe", pure=True).load(mig.current["config.yaml"])["mig-configs"] if mig else None
        if config.get("default") and config["default"] not in keys:
            raise SimulationError(f"devicePlugin.config.default {config['default']} is not in the ConfigMap")
        for node in self.cluster.nodes.values():
            key = node.labels.get(DP_LABEL)
            if key and config.get("name") and key not in keys:
                # Its config-manager exits, "specified config {key} does not exist" (k8s-device-plugin@v0.17.4
                # cmd/config-manager/main.go:351-354): the plugin pod goes NotReady.
                raise SimulationError(
                    f"{node.name}: {DP_LABEL}={key} names a key the ConfigMap does not have ({config['name']}): "
                    f"the config-manager exits"
                )
            value = node.labels.get(MIG_LABEL)
            if value and mig_configs is not None and value not in mig_configs:
                raise SimulationError(f"{node.name}: {MIG_LABEL}={value} names a config the ConfigMap does not have")

    def _check_pools_advertise(self, pools: set[str]) -> None:
        check_pools_advertise(self.cluster, pools)

    def _check_end(self, folder: str, cluster: Any) -> None:
        """What the cluster serves first, then what its workloads ask, then how it got there."""
        root = self.workdir / folder / self.name
        (capacity,) = load_documents(root / "capacity.yaml")
        pools = {pool["name"]: pool for pool in capacity["pools"]}
        for node in self.cluster.nodes.values():
            pool = pools.get(node.pool)
            if pool is None:
                continue
            served = self.cluster.served(node)
            if served != pool["perNode"]:
                raise SimulationError(f"end: {node.name} advertises {served}, capacity.yaml says {pool['perNode']}")
            if node.facts.mig_capable and node.labels.get(MIG_STATE_LABEL) != "success":
                raise SimulationError(f"end: {node.name} MIG state {node.labels.get(MIG_STATE_LABEL)}")
            if node.unschedulable:
                raise SimulationError(f"end: {node.name} is still cordoned")
        for workload in cluster.workloads:
            key = f"{workload.namespace}/{workload.name}"
            values = self.shell.workloads.get(key)
            if values is None:
                raise SimulationError(f"end: {key} is not deployed")
            for resource in values["resources"]["limits"]:
                if resource == "nvidia.com/gpumem-percentage":
                    resource = "nvidia.com/gpumem"  # a share of what HAMi registered
                if not any(
                    self.cluster.served(n).get(resource, 0) > 0
                    and all(n.labels.get(k) == v for k, v in values["nodeSelector"].items())
                    for n in self.cluster.nodes.values()
                ):
                    raise SimulationError(f"end: no node of {key}'s pool advertises {resource}")
            (fragment,) = load_documents(root / "workloads" / f"{workload.file_stem}.yaml")
            if values != fragment:
                raise SimulationError(f"end: {key} does not run its new values fragment")
            pending = [pod for pod in self.cluster.pods if pod.workload == key and pod.node is None]
            if pending:
                raise SimulationError(f"end: {len(pending)} pods of {key} are Pending")
        for node in self.cluster.nodes.values():
            if node.pool in pools:
                self._check_loaded(node)
        self._check_policy(root, cluster)

    def _check_loaded(self, node: Node) -> None:
        """The device plugin and GFD run the config the node's label names, as the ConfigMap has it now."""
        spec = self.cluster.spec
        if spec is None:
            self._check_standalone_loaded(node)
            return
        config = spec["devicePlugin"].get("config") or {}
        if not config.get("name"):
            return
        data = self.cluster.configmaps[config["name"]].current
        key = node.labels.get(DP_LABEL) or config.get("default")
        wanted = parse_config(data[key])
        for kind, name in (("dp", "nvidia-device-plugin"), ("gfd", "gpu-feature-discovery")):
            if getattr(node, kind).config != wanted:
                raise SimulationError(f"end: {node.name} runs {name} with an old config of {key}")

    def _check_standalone_loaded(self, node: Node) -> None:
        """Without the Operator, the standalone chart's plugin serves the node with the config its label names."""
        release = self.cluster.standalone
        if release is None:
            raise SimulationError("end: neither the GPU Operator nor the standalone device plugin is installed")
        if not node.nvdp.running:
            raise SimulationError(f"end: {node.name} runs no standalone device plugin ({node.nvdp.error})")
        name = release.configmap()
        files = self.cluster.configmaps[name].current if name else {}
        key, error = release.resolve(node.labels.get(DP_LABEL, ""), files)
        wanted = parse_config(files[key]) if key else {}
        if key is None or node.nvdp.config != wanted:
            raise SimulationError(f"end: {node.name} runs the standalone device plugin with an old config ({error})")

    def _check_policy(self, root: Path, cluster: Any) -> None:
        spec = self.cluster.spec
        if spec is None:
            return  # no Operator: the standalone chart serves every node (_check_standalone_loaded)
        if self.cluster.standalone is not None:
            raise SimulationError(
                f"end: the standalone device plugin release {self.cluster.standalone.name} is still installed"
            )
        version = cluster.operator.release.version
        expected = image_version(chart_values(self.upstream, version)["devicePlugin"]["version"])
        if spec["devicePlugin"]["version"] != expected:
            raise SimulationError(
                f"end: the device plugin runs {spec['devicePlugin']['version']}, {version} ships {expected}"
            )
        (patch,) = load_documents(root / "clusterpolicy-patch.yaml")
        wanted = patch["spec"]
        for path in (
            "driver.enabled",
            "driver.version",
            "toolkit.enabled",
            "mig.strategy",
            "cdi.enabled",
            "devicePlugin.enabled",
            "devicePlugin.config",
        ):
            want, have = _lookup(wanted, path), _lookup(spec, path)
            if want is None and have is _MISSING:
                continue  # null in a merge patch: the field must be gone
            if want is not _MISSING and have != want:
                raise SimulationError(f"end: ClusterPolicy {path} is {have!r}, the fleet says {want!r}")
        self._check_hami(root)

    def _check_hami(self, root: Path) -> None:
        """HAMi runs the rendered values, and each of its device plugins the settings they give its node."""
        values_file = root / "hami-values.yaml"
        if not values_file.is_file():
            if self.cluster.hami is not None:
                raise SimulationError("end: HAMi is still installed")
            return
        release = self.cluster.hami
        if release is None:
            raise SimulationError("end: HAMi is not installed")
        (values,) = load_documents(values_file)
        if helm.coalesce(values, release.values) != release.values:
            raise SimulationError("end: the HAMi release does not run hami-values.yaml")
        # kube-scheduler "must not be newer than" the API server and is "expected to match" its minor version, one
        # older being allowed only "to allow live upgrades" (kubernetes/website content/en/releases/
        # version-skew-policy.md, kube-scheduler section): once the plan is done it matches. HAMi's chart pins it to
        # the cluster it rendered against (sim/hami.py).
        if release.scheduler_tag != f"v{self.cluster.kubernetes}":
            raise SimulationError(
                f"end: HAMi's kube-scheduler runs {release.scheduler_tag} against a v{self.cluster.kubernetes} "
                "control plane: the release was rendered for the old cluster"
            )
        plugin = release.values["devicePlugin"]
        for node in self.cluster.nodes.values():
            if not node.hami_plugin.running:
                continue
            split = int(release.node_config(node.name).get("devicesplitcount", plugin["deviceSplitCount"]))
            if node.hami_plugin.split != split:
                raise SimulationError(
                    f"end: {node.name} runs HAMi's device plugin with split {node.hami_plugin.split}, not {split}"
                )


def check_pools_advertise(cluster: Cluster, pools: set[str]) -> None:
    """Invariant 2: outside its drained (cordoned) batch, a pool advertises GPUs."""
    for pool in pools:
        # A node still coming up (an autoscaler's, say) serves nothing yet: that is not a rollout fault.
        nodes = [n for n in cluster.nodes.values() if n.pool == pool and not n.unschedulable and n.initialized]
        if nodes and not any(
            count > 0 for n in nodes for name, count in n.allocatable.items() if name.startswith("nvidia.com/")
        ):
            raise SimulationError(f"pool {pool} advertises no GPU on its schedulable nodes")


_MISSING = object()


def _lookup(data: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(data, dict) or part not in data:
            return _MISSING
        data = data[part]
    return data
