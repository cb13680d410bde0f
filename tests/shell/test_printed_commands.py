"""Every printed command is one argv per program, whatever the names: pasted into bash it runs exactly the
intended programs with exactly the intended arguments, against the cluster it names and no other."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpustack_gen import load_fleet
from gpustack_gen.change import analyse
from gpustack_gen.model.fleet import Cluster
from gpustack_gen.plan import plan_fleets
from gpustack_gen.shell import Command, Script, in_cluster, kubectl, render
from gpustack_gen.verify import commands as hints
from gpustack_gen.workdir import Paths
from shell.sandbox import Call, Sandbox, programs, xargs_free

ROOT = Path(__file__).resolve().parent.parent.parent
CHANGES = ROOT / "tests" / "changes"
EXAMPLE = (ROOT / "examples" / "fleet.yaml").read_text(encoding="utf-8")

# Any Unicode text a string can carry to a program (argv holds no NUL; surrogates are not text), weighted
# towards what a shell reads as syntax.
SHELL_SYNTAX = "'\"`$\\;&|<>(){}[]*?~#! \t\n=-"
NAMES = st.text(
    st.one_of(st.sampled_from(SHELL_SYNTAX), st.characters(blacklist_categories=("Cs",), blacklist_characters="\0")),
    min_size=1,
    max_size=12,
)
PROPERTY = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


KINDS = ("mig-layout", "rename-on", "operator-version", "hami-to-time-slicing", "gpu-operator-to-dra")


def _hostile(cluster: Cluster, context: str, namespace: str, selector: str, chart: str) -> Cluster:
    pools = tuple(dataclasses.replace(p, node_selector=(("pool", f"{p.name}{selector}"),)) for p in cluster.pools)
    workloads = tuple(
        w if w.helm is None else dataclasses.replace(w, helm=dataclasses.replace(w.helm, chart=f"./{chart}"))
        for w in cluster.workloads
    )
    return dataclasses.replace(
        cluster,
        kube_context=context,
        operator=dataclasses.replace(cluster.operator, namespace=namespace),
        pools=pools,
        workloads=workloads,
    )


def _scripts(old: Cluster, new: Cluster, rendered: str, fleet_dir: str) -> list[Script]:
    steps = analyse(old, new, Paths(rendered=rendered, fleet_dir=fleet_dir)).steps
    return [script for step in steps for script in (step.command, step.verify) if script is not None]


def _pasted(sandbox: Sandbox, scripts: list[Script]) -> list[Call]:
    text = "\n".join(render(script) for script in scripts)
    assert sandbox.syntax_ok(text)
    return sandbox.run(text)


@pytest.mark.parametrize("kind", KINDS)
@PROPERTY
@given(context=NAMES, namespace=NAMES, selector=NAMES, rendered=NAMES, chart=NAMES)
def test_a_plan_with_any_names_runs_exactly_its_argv(
    tmp_path_factory, kind: str, context: str, namespace: str, selector: str, rendered: str, chart: str
) -> None:
    old_fleet = load_fleet(CHANGES / kind / "old.yaml", name="old.yaml")
    new_fleet = load_fleet(CHANGES / kind / "new.yaml", name="new.yaml")
    old, new = (_hostile(f.clusters[0], context, namespace, selector, chart) for f in (old_fleet, new_fleet))
    scripts = _scripts(old, new, rendered, fleet_dir=chart)
    for script in scripts:  # a single command's words are its argv
        assert not isinstance(script, Command) or shlex.split(render(script)) == list(script.argv)
    sandbox = Sandbox(tmp_path_factory.mktemp("sandbox"))
    calls = _pasted(sandbox, scripts)
    # the programs of a pipe start together, in no set order
    assert sorted(call.argv for call in calls) == sorted(xargs_free([argv for s in scripts for argv in programs(s)]))
    assert {call.context for call in calls if call.argv[0] == "kubectl"} == {context}


@PROPERTY
@given(context=NAMES, node=NAMES, namespace=NAMES, pod=NAMES)
def test_verify_s_commands_with_any_names_are_their_argv(
    tmp_path_factory, context: str, node: str, namespace: str, pod: str
) -> None:
    cluster = dataclasses.replace(load_fleet(EXAMPLE).clusters[0], kube_context=context)
    shown = [
        (hints.label_node(cluster, node, "gpu", "on"), ("label", "node", node, "gpu=on", "--overwrite")),
        (hints.logs(cluster, namespace, pod, node), ("-n", namespace, "logs", pod, "-c", node)),
        (hints.describe(cluster, namespace, "pod", pod), ("-n", namespace, "describe", "pod", pod)),
    ]
    sandbox = Sandbox(tmp_path_factory.mktemp("sandbox"))
    for text, args in shown:
        assert shlex.split(text) == ["kubectl", "--context", context, *args]
        assert sandbox.syntax_ok(text)
        (call,) = sandbox.run(text)
        assert call == Call(("kubectl", "--context", context, *args), context)


def test_a_command_that_reaches_a_cluster_is_not_printed_without_one() -> None:
    try:
        render(kubectl("get", "nodes"))
    except AssertionError as refused:
        assert "printed without its cluster" in str(refused)
    else:
        raise AssertionError("rendered a kubectl command that names no context")
    assert render(in_cluster(kubectl("get", "nodes"), "a b")) == "kubectl --context 'a b' get nodes"


def test_two_runbooks_pasted_where_the_other_cluster_is_current_touch_only_their_own(tmp_path: Path) -> None:
    """prod's and stage's runbooks, each pasted in a shell whose current context is the other cluster."""
    old = load_fleet(EXAMPLE)
    new = load_fleet(
        EXAMPLE.replace(
            "tesla-t4: {strategy: time-slicing, replicas: 4}", "tesla-t4: {strategy: time-slicing, replicas: 3}"
        ).replace("tesla-t4: {replicas: 5}", "tesla-t4: {replicas: 6}")
    )
    result = plan_fleets(old, new)
    assert [(c.name, c.context) for c in result.clusters] == [("prod", "prod"), ("stage", "stage")]
    for runbook, other in zip(result.clusters, ("stage", "prod"), strict=True):
        sandbox = Sandbox(tmp_path / runbook.name, current_context=other)
        text = "\n".join(t for step in runbook.steps for t in (step.command_text, step.verify_text) if t)
        calls = sandbox.run(text)
        reaching = [call for call in calls if call.argv[0] in ("kubectl", "helm") and call.argv[1:3] != ("repo", "add")]
        assert reaching and {call.context for call in reaching} == {runbook.context}
        assert all(other not in call.argv for call in calls)
