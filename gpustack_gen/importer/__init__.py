"""``gpustack-gen import``: turn a cluster's current GPU Operator state into a fleet file.

    from pathlib import Path
    from gpustack_gen.importer import import_cluster, check_roundtrip

    result = import_cluster("prod", values=Path("values.yaml"), configmaps=[Path("cm.yaml")],
                            nodes=Path("nodes.yaml"))
    print(result.fleet_text)        # the fleet file, with comments and TODOs
    report = check_roundtrip(result)
    report.ok                       # True when rendering it changes nothing the model owns

The library never prints or exits; bad inputs raise :class:`gpustack_gen.errors.FleetError`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import FleetError, Problem
from ..k8s_state import InputSource, InputText
from ..model.names import KUBERNETES_VERSION, explain_dns_label
from ..shell import kubectl, text_in
from ..versions import leading_version
from .discover import Discovery, NodeGroup, discover
from .inputs import Inputs, read_inputs
from .notes import OPERATOR, Todo
from .recover import OperatorState, recover_operator, recover_sharing, unused_config_todos
from .roundtrip import RoundTripReport
from .roundtrip import check_roundtrip as _check_operator_roundtrip
from .standalone import PluginState, is_standalone, recover_plugin
from .write import ClusterPlan, PoolPlan, user_values_file, write_fleet

__all__ = [
    "ImportResult",
    "InputText",
    "RoundTripReport",
    "Todo",
    "check_roundtrip",
    "import_cluster",
]


@dataclass(frozen=True)
class ImportResult:
    """The imported fleet file and what the user still has to decide."""

    fleet_text: str
    todos: tuple[str, ...]
    warnings: tuple[str, ...]
    inputs: Inputs = field(repr=False, compare=False)
    plan: ClusterPlan = field(repr=False, compare=False)

    @property
    def todo_items(self) -> tuple[Todo, ...]:
        return self.plan.todos

    @property
    def values_file(self) -> tuple[str, str] | None:
        """(name, text) of the values file beside the fleet: the release's values the fleet model does not own,
        listed in the fleet's operator.valuesFiles; None when there are none."""
        values = self.plan.state.user_values
        if not values or isinstance(self.plan.state, PluginState):
            return None
        from ..yamlio.writer import dump_yaml

        header = "# The GPU Operator release's values that gpustack-gen does not own, as import found them.\n"
        return user_values_file(self.plan.name), header + dump_yaml(values)


def import_cluster(
    cluster: str,
    *,
    values: InputSource | None = None,
    configmaps: Sequence[InputSource] = (),
    clusterpolicy: InputSource | None = None,
    nodes: InputSource | None = None,
    kubernetes: str | None = None,
    operator_version: str | None = None,
    daemonsets: InputSource | None = None,
) -> ImportResult:
    """Read the inputs, discover the pools, recover the settings and write the fleet file text.

    Raises :class:`FleetError` (exit 2 in the CLI) for inputs that are unreadable or not what they claim.
    """
    problems = []
    if explain_dns_label(cluster) is not None:
        problems.append(Problem("--cluster", 0, 0, "", explain_dns_label(cluster) or "", "e.g. prod"))
    k8s_override = None
    if kubernetes is not None:
        version = leading_version(kubernetes)
        k8s_override = None if version is None else "{}.{}.{}".format(*version)
        if k8s_override is None or re.fullmatch(KUBERNETES_VERSION, k8s_override) is None:
            problems.append(
                Problem("--kubernetes", 0, 0, "", f"{kubernetes!r} is not a Kubernetes version", "e.g. 1.29.15")
            )
    if problems:
        raise FleetError(problems)
    inputs = read_inputs(
        values=values, configmaps=configmaps, clusterpolicy=clusterpolicy, nodes=nodes, workloads=daemonsets
    )
    standalone = is_standalone(inputs)
    if standalone and operator_version is not None:
        raise FleetError(
            [
                Problem(
                    "--operator-version",
                    0,
                    0,
                    "",
                    "the inputs are a standalone nvidia-device-plugin release's, not the GPU Operator's",
                    "drop --operator-version: the chart version comes from --daemonsets",
                )
            ]
        )
    found = discover(inputs.nodes)
    if not found.groups:
        where = inputs.nodes_file or "--nodes"
        hint = (
            "pass the output of kubectl get nodes -o yaml"
            if inputs.nodes_file is None
            else ("GPU feature discovery labels GPU nodes with nvidia.com/gpu.product; is the GPU Operator running?")
        )
        raise FleetError(
            [
                Problem(
                    where, 0, 0, "", "no GPU nodes (nodes labelled nvidia.com/gpu.product) to import pools from", hint
                )
            ]
        )
    state = recover_plugin(inputs) if standalone else recover_operator(inputs, operator_version, found.groups)
    plan = _plan(cluster, inputs, found, state, k8s_override)
    text = write_fleet(plan)
    extra = _validation_todos(text)
    if extra:
        plan = dataclasses.replace(plan, todos=(*plan.todos, *extra))
        text = write_fleet(plan)
    if isinstance(state, PluginState):
        extra = _not_kept_todos(text, inputs)
        if extra:
            plan = dataclasses.replace(plan, todos=(*plan.todos, *extra))
            text = write_fleet(plan)
    warnings = list(state.warnings)
    for pool in plan.pools:
        warnings.extend(pool.sharing.warnings)
    return ImportResult(
        fleet_text=text,
        todos=tuple(t.message for t in plan.todos),
        warnings=tuple(dict.fromkeys(warnings)),
        inputs=inputs,
        plan=plan,
    )


def check_roundtrip(result: ImportResult) -> RoundTripReport:
    """Render ``result.fleet_text`` and compare it with the inputs it was imported from."""
    if isinstance(result.plan.state, PluginState):
        from .standalone_roundtrip import check_standalone_roundtrip

        return check_standalone_roundtrip(result)
    return _check_operator_roundtrip(result)


def _not_kept_todos(text: str, inputs: Inputs) -> list[Todo]:
    """The release's values the fleet neither models nor renders the same: the first upgrade would drop them."""
    from .standalone_roundtrip import rendered_values

    rendered = rendered_values(text)
    if rendered is None:
        return []
    from .standalone import DEVICE_PLUGIN, values_not_kept

    return [
        Todo(
            f"{line}: not imported (the fleet's helm upgrade would reset it: model it, or keep it out of the release)",
            DEVICE_PLUGIN,
        )
        for line in values_not_kept(inputs.values, rendered)
    ]


def _plan(
    cluster: str, inputs: Inputs, found: Discovery, state: OperatorState | PluginState, kubernetes: str | None
) -> ClusterPlan:
    todos: list[Todo] = list(found.todos)
    todos.extend(state.todos)
    pools = []
    plugin = isinstance(state, PluginState)
    for group in found.groups:
        todos.extend(_group_todos(group, cluster))
        if plugin:
            assert isinstance(state, PluginState)
            sharing = recover_sharing(group, state, state.default_note or "config.default")
        else:
            sharing = recover_sharing(group, state)
        todos.extend(sharing.todos)
        pools.append(PoolPlan(group, sharing))
    todos.extend(unused_config_todos(state, [p.sharing for p in pools]))
    renders_configmaps = any(
        p.sharing.policy is not None
        and (p.sharing.policy["strategy"] in ("time-slicing", "mps") or "layout" in p.sharing.policy)
        for p in pools
    )
    if state.namespace is None and renders_configmaps and not plugin:
        todos.append(
            Todo(
                "no input tells the Operator's namespace (the ConfigMaps must be in it); left to the default, "
                "gpu-operator",
                OPERATOR,
            )
        )
    k8s, k8s_note = found.kubernetes, found.kubernetes_note
    if kubernetes is not None:
        k8s, k8s_note = kubernetes, "--kubernetes"
        todos = [t for t in todos if not t.message.startswith("the nodes run kubelets")]
    elif k8s is None:
        todos.append(
            Todo("no node tells the Kubernetes version (status.nodeInfo.kubeletVersion): pass --kubernetes", "cluster")
        )
    return ClusterPlan(
        name=cluster,
        kubernetes=k8s,
        kubernetes_note=k8s_note,
        runtime=found.runtime,
        runtime_note=found.runtime_note,
        state=state,
        pools=tuple(pools),
        todos=tuple(dict.fromkeys(todos)),
        sources=inputs.files,
    )


def _group_todos(group: NodeGroup, context: str) -> list[Todo]:
    """``context``: the imported cluster's kube context (its name, the fleet's default)."""
    from .notes import pool_place

    place = pool_place(group.name)
    todos = []
    if group.gpu is None:
        todos.append(
            Todo(
                f"GPU {group.product} (nvidia.com/gpu.product) is not in the catalog (gpustack-gen gpus): "
                "set gpu to a catalog id",
                place,
            )
        )
    if group.gpus_per_node is None:
        todos.append(Todo("the nodes have no nvidia.com/gpu.count label; assumed 1 GPU per node", place))
    if not group.selector_exact:
        from .discover import NEW_POOL_LABEL

        todos.append(
            Todo(
                "no set of existing labels selects exactly these nodes; label them first: "
                + text_in(context, kubectl("label", "nodes", *group.node_names, f"{NEW_POOL_LABEL}={group.name}")),
                place,
            )
        )
    return todos


def _validation_todos(text: str) -> list[Todo]:
    from ..model import load_fleet

    try:
        load_fleet(text, name="fleet.yaml")
    except FleetError as exc:
        return [Todo(f"the imported fleet does not validate: {p.path or 'file'}: {p.message}") for p in exc.errors]
    return []
