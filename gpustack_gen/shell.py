"""The commands gpustack-gen prints: argument lists, turned into shell text by :func:`render` alone.

A printed command is pasted into a shell with cluster-admin rights, so nothing is formatted into command text:
each word is an argument, quoted by :func:`shlex.quote`, and the few shell constructs the checks need (``&&``,
a pipe, an output file, "prints nothing") are composed from quoted parts. Every kubectl command names its
cluster (``--context``) and every helm command that reaches one ``--kube-context``, so a runbook pasted in a
shell whose current context is another cluster does not touch it.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """One program and its arguments, as ``execve`` gets them."""

    argv: tuple[str, ...]
    # The flag that names the cluster (kubectl --context, helm --kube-context) while no context is bound yet:
    # builders know what to run, the plan or report that prints it knows where (see in_cluster).
    context_flag: str | None = None

    def __post_init__(self) -> None:
        assert self.argv, "a command names its program"


@dataclass(frozen=True)
class Pipe:
    """``a | b``: ``b`` reads what ``a`` writes.

    With ``failure``, a failing ``a`` also writes ``failure`` as its last line (``{ a || echo FAILURE; } | b``),
    for a ``b`` that refuses input ending so: without pipefail, which a pasted command cannot set, a pipe's status
    is its last command's, and a kubectl that lists part of what it was asked for (RBAC on one kind) and then
    fails would be judged on what it printed.
    """

    parts: tuple[Command, ...]
    failure: str | None = None


@dataclass(frozen=True)
class IntoFile:
    """``command > path``: the command's output saved in a file."""

    command: Command
    path: str


@dataclass(frozen=True)
class Spliced:
    """``command`` with the words ``listing`` prints put in before argument ``at``: ``$(listing)``, split by the
    shell (node names), after ``prefix`` when given (``spec.nodeName=$(...)``). ``listing`` prints names only."""

    command: Command
    at: int
    listing: Command
    prefix: str = ""


@dataclass(frozen=True)
class PrintsNothing:
    """Passes when ``command`` succeeds and prints nothing: ``test -z "$(command || echo FAILURE)"``.

    ``kubectl get`` exits 0 on an empty list; a failing kubectl (wrong context, no access) prints nothing on
    stdout either, so its failure is turned into output that fails the test.
    """

    command: Command | Spliced
    failure: str = "kubectl failed"


@dataclass(frozen=True)
class AllOf:
    """``a && b && ...``: each runs only if the ones before it succeeded."""

    parts: tuple[Script, ...]


Script = Command | Pipe | IntoFile | Spliced | PrintsNothing | AllOf


def command(*argv: str) -> Command:
    return Command(tuple(argv))


def all_of(*scripts: Script) -> Script:
    """The scripts joined by ``&&``, nested ``AllOf`` flattened; one script stays itself."""
    parts: list[Script] = []
    for script in scripts:
        parts.extend(script.parts if isinstance(script, AllOf) else (script,))
    return parts[0] if len(parts) == 1 else AllOf(tuple(parts))


KUBECTL_CONTEXT = "--context"
HELM_CONTEXT = "--kube-context"


def kubectl(*args: str) -> Command:
    """A kubectl command, to be bound to its cluster with :func:`in_cluster`."""
    return Command(("kubectl", *args), KUBECTL_CONTEXT)


def helm(*args: str) -> Command:
    """A helm command that reaches a cluster, to be bound to it with :func:`in_cluster`."""
    return Command(("helm", *args), HELM_CONTEXT)


def local_helm(*args: str) -> Command:
    """A helm command that changes only this machine (``helm repo add``, ``helm repo update``)."""
    return Command(("helm", *args))


def in_cluster(script: Script, context: str) -> Script:
    """``script`` with every command that reaches a cluster naming kube context ``context``: kubectl's global
    flag right after the program (``kubectl --context C get ...``), helm's after its arguments."""
    if isinstance(script, Command):
        if script.context_flag is None:
            return script
        if script.context_flag == KUBECTL_CONTEXT:
            return Command((script.argv[0], KUBECTL_CONTEXT, context, *script.argv[1:]))
        return Command((*script.argv, script.context_flag, context))
    if isinstance(script, Pipe):
        return Pipe(tuple(bound_command(part, context) for part in script.parts), script.failure)
    if isinstance(script, IntoFile):
        return IntoFile(bound_command(script.command, context), script.path)
    if isinstance(script, Spliced):
        return _bound_splice(script, context)
    if isinstance(script, PrintsNothing):
        inner = script.command
        bound = _bound_splice(inner, context) if isinstance(inner, Spliced) else bound_command(inner, context)
        return PrintsNothing(bound, script.failure)
    return AllOf(tuple(in_cluster(part, context) for part in script.parts))


def _bound_splice(splice: Spliced, context: str) -> Spliced:
    """kubectl's context flag goes in after the program, so the splice moves by its two words."""
    shift = 2 if splice.command.context_flag == KUBECTL_CONTEXT else 0
    return Spliced(
        bound_command(splice.command, context),
        splice.at + shift,
        bound_command(splice.listing, context),
        splice.prefix,
    )


def bound_command(command: Command, context: str) -> Command:
    """:func:`in_cluster` of one command (to hand to another program, such as ``xargs``)."""
    bound = in_cluster(command, context)
    assert isinstance(bound, Command)
    return bound


def text_in(context: str, script: Script) -> str:
    """``script`` bound to ``context``, as shell text: what a report prints."""
    return render(in_cluster(script, context))


def lines_in(context: str, script: Script) -> tuple[str, ...]:
    """``script`` bound to ``context``, one line per command it runs in turn: a file header's steps."""
    bound = in_cluster(script, context)
    return tuple(render(part) for part in (bound.parts if isinstance(bound, AllOf) else (bound,)))


def render(script: Script) -> str:
    """The one place a command becomes shell text."""
    if isinstance(script, Command):
        assert script.context_flag is None, f"{script.argv[0]} command printed without its cluster: {script.argv}"
        return shlex.join(script.argv)
    if isinstance(script, Pipe):
        first, *rest = (render(part) for part in script.parts)
        if script.failure is not None:
            first = f"{{ {first} || echo {shlex.quote(script.failure)}; }}"
        return " | ".join((first, *rest))
    if isinstance(script, IntoFile):
        return f"{render(script.command)} > {shlex.quote(script.path)}"
    if isinstance(script, Spliced):
        words = [shlex.quote(word) for word in script.command.argv]
        listed = f"$({render(script.listing)})"
        words.insert(script.at, f"{shlex.quote(script.prefix)}{listed}" if script.prefix else listed)
        return " ".join(words)
    if isinstance(script, PrintsNothing):
        inner = f"{render(script.command)} || echo {shlex.quote(script.failure)}"
        return f'test -z "$({inner})"'
    return " && ".join(render(part) for part in script.parts)
