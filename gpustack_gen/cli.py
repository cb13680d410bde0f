"""The ``gpustack-gen`` command: a thin layer that calls the library, prints, and sets the exit code.

Exit codes: 0 ok; 1 differences (``render --check``); 2 invalid input, usage or output error;
3 internal error (a bug: please report it).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from . import __version__
from .errors import ExitCode

if TYPE_CHECKING:
    from .diff import Side
    from .errors import Problem
    from .model import Fleet
    from .model.share import ClusterShare
    from .versions.gpu_operator import OperatorVersion

# The --format choices, kept in step with the report tables by a test (importing them here would load the
# reports, and their templates, for every command).
_DIFF_FORMATS = ("text", "markdown", "json", "github")
_PLAN_FORMATS = ("text", "markdown", "json")
_VERIFY_FORMATS = ("text", "json", "markdown", "github")
_LINT_FORMATS = ("text", "json", "github")

F = TypeVar("F", bound=Callable[..., Any])


def _echo(text: str, *, err: bool = False, nl: bool = True, json_text: bool = False, styled: bool = False) -> None:
    """Print ``text`` inert: every line the command prints goes through here (``gpustack_gen.inert``).

    ``json_text``: JSON, whose strings take ``\\uXXXX`` escapes; ``styled``: a coloured report, whose own styles
    stay. A character the stream's encoding cannot hold (a non-UTF-8 locale) is written as its escape, not a crash.
    """
    from .inert import inert_json, inert_text

    safe = inert_json(text) if json_text else inert_text(text, keep_styles=styled)
    encoding = getattr(sys.stderr if err else sys.stdout, "encoding", None) or "utf-8"
    click.echo(safe.encode(encoding, "backslashreplace").decode(encoding), err=err, nl=nl)


def _echo_report(text: str, output_format: str, *, styled: bool = False) -> None:
    """A whole report, as its format needs: JSON escaped as JSON, the others inert (colours kept where styled)."""
    _echo(text, nl=False, json_text=output_format == "json", styled=styled)


def _print_problems(problems: Sequence[Problem]) -> None:
    from .errors import shown_problems

    shown, more = shown_problems(problems)
    for problem in shown:
        _echo(problem.format(), err=True)
    if more:
        _echo(more, err=True)


def _handle_errors(command: F) -> F:
    """Map library errors to messages and exit codes, the one place that does: FleetError (located problems),
    InputError (an input, kubeconfig or API that cannot be used) and UsageError exit 2; anything else is a bug (3)."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from .errors import FleetError, InputError, InternalError, UsageError

        debug = click.get_current_context().find_root().params.get("debug", False)
        try:
            return command(*args, **kwargs)
        except FleetError as exc:
            _print_problems(exc.problems)
            errors = len(exc.errors)
            _echo(f"{errors} error{'s' if errors != 1 else ''}; nothing was written.", err=True)
            sys.exit(ExitCode.INVALID)
        except InputError as exc:  # output errors too: a read-only target, a full disk
            _echo(f"error: {exc}", err=True)
            sys.exit(ExitCode.INVALID)
        except UsageError as exc:
            raise click.UsageError(str(exc)) from None
        except InternalError as exc:
            if debug:
                traceback.print_exc()
            _echo(
                f"internal error: generated {_one_line(str(exc))} (gpustack-gen {__version__}); "
                "nothing was written. This is a bug: please report this, with the output of --debug.",
                err=True,
            )
            sys.exit(ExitCode.INTERNAL)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException, SystemExit):
            raise
        except Exception as exc:
            if debug:
                traceback.print_exc()
            _echo(
                f"internal error: {type(exc).__name__}: {_one_line(str(exc))} (gpustack-gen {__version__}). "
                "This is a bug: please report this, with the output of --debug.",
                err=True,
            )
            sys.exit(ExitCode.INTERNAL)

    return wrapper  # type: ignore[return-value]


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "(no message)"


def _operator_version(text: str) -> OperatorVersion:
    """The release an ``--operator-version`` option names; a usage error (exit 2) when gpustack-gen does not know it."""
    from .versions.gpu_operator import UnknownOperatorVersion, require_operator_version

    try:
        return require_operator_version(text)
    except UnknownOperatorVersion as unknown:
        raise click.UsageError(f"{unknown}; {unknown.hint}") from None


def _refuse_two_controllers(fleet: Fleet, clusters: tuple[str, ...], wrap: tuple[str, ...]) -> None:
    """A usage error (exit 2) when ``--wrap`` wraps a cluster for both Argo CD and Flux.

    Its kustomization.yaml would list the Application and the HelmRelease, so that whichever controller applies
    the folder installs the chart through both. A fleet file that asks for both itself gets the model's warning.
    """
    added = {"argocd", "flux"} & set(wrap)
    for cluster in fleet.clusters:
        both = {"argocd", "flux"} <= added | set(cluster.delivery.wrap)
        if added and both and (not clusters or cluster.name in clusters):
            raise click.UsageError(
                f"--wrap {' --wrap '.join(sorted(added))} would wrap cluster {cluster.name!r} for both Argo CD and "
                "Flux: its kustomization.yaml would list the Application and the HelmRelease, and whichever "
                "controller applies the folder would install the chart through both; wrap it for one of them"
            )


def _colored(output_format: str) -> bool:
    """Text reports are coloured unless NO_COLOR is set (https://no-color.org); other formats never are."""
    return output_format == "text" and "NO_COLOR" not in os.environ


def _load(path: str, share: ClusterShare | None = None) -> Fleet:
    from .model import load_fleet

    fleet = load_fleet(Path(path), share=share)
    _print_problems(fleet.warnings)
    return fleet


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpustack-gen")
@click.option("--debug", is_flag=True, help="Show the traceback of internal errors.")
def main(debug: bool) -> None:
    """Compile a GPU fleet intent file into NVIDIA GPU Operator artifacts.

    \b
    gpustack-gen validate fleet.yaml
    gpustack-gen render fleet.yaml --out rendered/
    gpustack-gen render fleet.yaml --out rendered/ --check
    """


@main.command()
@click.argument("fleet", type=click.Path(dir_okay=False))
@_handle_errors
def validate(fleet: str) -> None:
    """Check FLEET; print every problem as file:line:col: field: message."""
    loaded = _load(fleet)
    pools = sum(len(c.pools) for c in loaded.clusters)
    _echo(f"{fleet}: ok ({len(loaded.clusters)} clusters, {pools} pools)")


@main.command()
@click.argument("fleet", type=click.Path(dir_okay=False))
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Output folder.")
@click.option("--cluster", "clusters", multiple=True, help="Render only this cluster (repeatable).")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 and list what differs when OUT is not up to date.")
@click.option(
    "--wrap",
    "wrap",
    multiple=True,
    type=click.Choice(["argocd", "flux", "helmfile"]),
    help="Also write this GitOps wrapper for every cluster (repeatable; adds to the fleet's delivery.wrap).",
)
@_handle_errors
def render(fleet: str, out_dir: str, clusters: tuple[str, ...], check: bool, wrap: tuple[str, ...]) -> None:
    """Render FLEET into OUT/<cluster>/ atomically."""
    from .rendering import render as render_fleet

    loaded = _load(fleet)
    _refuse_two_controllers(loaded, clusters, wrap)
    bundle = render_fleet(loaded, clusters or None, wrap=wrap)
    if check:
        drift = bundle.drift(out_dir)
        if drift.clean:
            _echo(f"{out_dir}: up to date ({len(bundle.files)} files)")
            return
        for label, paths in (("missing", drift.missing), ("changed", drift.changed), ("stale", drift.stale)):
            for path in paths:
                _echo(f"{label}: {Path(out_dir) / path}")
        _echo(f"{out_dir} is not up to date: run gpustack-gen render {fleet} --out {out_dir}", err=True)
        sys.exit(ExitCode.DIFFERS)
    summary = bundle.write(
        out_dir,
        on_wait=lambda: _echo(f"waiting for another gpustack-gen render into {out_dir} to finish...", err=True),
    )
    _echo(
        f"{out_dir}: {len(summary.written)} written, {len(summary.unchanged)} unchanged, {len(summary.removed)} removed"
    )


@main.command()
@_handle_errors
@click.option(
    "--kind",
    type=click.Choice(
        ["fleet", "device-plugin-config", "mig-parted-config", "gpu-operator-values", "clusterpolicy-spec"]
    ),
    default="fleet",
    show_default=True,
    help="Which schema to print.",
)
@click.option(
    "--operator-version",
    default=None,
    help="GPU Operator version for gpu-operator-values and clusterpolicy-spec (default: newest known).",
)
def schema(kind: str, operator_version: str | None) -> None:
    """Print a JSON Schema: the fleet file's (schemas/fleet.schema.json) or an artifact kind's.

    gpu-operator-values and clusterpolicy-spec are generated for one GPU Operator version from the
    version-gate table; the others are the files in schemas/.
    """
    if kind == "fleet" or kind in {"device-plugin-config", "mig-parted-config"}:
        if operator_version is not None:
            raise click.UsageError(
                f"--operator-version applies to gpu-operator-values and clusterpolicy-spec, not {kind}"
            )
        if kind == "fleet":
            from .init import fleet_schema_text

            _echo(fleet_schema_text(), nl=False)
            return
        from .validate.schema_files import load_schema

        _echo(json.dumps(load_schema(f"{kind}.schema.json"), indent=2, sort_keys=False))
        return
    from .validate.operator_schema import operator_schema
    from .versions.gpu_operator import NEWEST_OPERATOR

    release = NEWEST_OPERATOR if operator_version is None else _operator_version(operator_version)
    _echo(json.dumps(operator_schema(kind, release.version), indent=2, sort_keys=False))


@main.command()
@_handle_errors
def versions() -> None:
    """List the chart versions gpustack-gen knows (GPU Operator, HAMi, NVIDIA DRA driver) and what each gates.

    \b
    operator: the device plugin and MIG manager it ships; cdi-on-by-default: whether the chart enables CDI
      when cdi.enabled is not set (not the cdi.default option); mps: whether its plugin shares GPUs by MPS.
    hami: values-keys, how many chart values gpustack-gen may write for that chart.
    dra-driver: the chart and where it is published (an oci:// registry, or a Helm repository); sharing, the
      strategies its feature gates allow besides whole GPUs and MIG; kubernetes, the version its
      prerequisites name (older clusters get a warning).
    verified: the chart's own files are in the reference data the tests hold gpustack-gen against.
    """
    from .validate.backends.hami import VALUES_KEYS
    from .versions.dra import DRA_VERSIONS
    from .versions.gpu_operator import OPERATOR_VERSIONS
    from .versions.hami import HAMI_VERSIONS

    def yes(flag: bool) -> str:
        return "yes" if flag else "no"

    _echo(f"{'operator':<10} {'device-plugin':<14} {'mig-manager':<12} cdi-on-by-default  mps  verified")
    for v in OPERATOR_VERSIONS:
        _echo(
            f"{v.version:<10} {v.device_plugin:<14} {v.mig_manager:<12} {yes(v.cdi_enabled_by_default):<18} "
            f"{yes(v.has_mps):<4} {yes(v.verified)}"
        )
    _echo(f"\n{'hami':<10} {'values-keys':<12} verified")
    for h in HAMI_VERSIONS:
        _echo(f"{h.version:<10} {sum(gate.allows(h) for gate in VALUES_KEYS):<12} {yes(h.verified)}")
    _echo(f"\n{'dra-driver':<10} {'chart':<22} {'source':<47} {'sharing':<17} {'kubernetes':<11} verified")
    for d in DRA_VERSIONS:
        _echo(
            f"{d.version:<10} {d.chart:<22} {d.repository:<47} {','.join(d.sharing) or '-':<17} "
            f"{d.kubernetes_prerequisite or '-':<11} {yes(d.verified)}"
        )


@main.command()
@click.argument("gpu", required=False)
@_handle_errors
def gpus(gpu: str | None) -> None:
    """List the GPU catalog, or the MIG profiles and built-in configs of one GPU."""
    from .catalog import GPUS, builtin_mig_config_names, get_gpu, suggest_gpus

    if gpu is None:
        for model in GPUS:
            mig = "MIG" if model.mig_capable else "no MIG"
            _echo(f"{model.id:<30} {model.name:<32} {mig:<7} {', '.join(model.product_labels)}")
        return
    found = get_gpu(gpu)
    if found is None:
        close = suggest_gpus(gpu)
        raise click.UsageError(f"unknown GPU {gpu!r}" + (f"; did you mean {' or '.join(close)}?" if close else ""))
    _echo(f"{found.id}: {found.name} ({found.architecture})")
    _echo(f"product labels: {', '.join(found.product_labels) or '-'}")
    if not found.mig_capable:
        _echo("MIG: not supported; share it with time-slicing or mps")
        return
    _echo(f"MIG: {found.compute_slices} compute / {found.memory_slices} memory slices")
    for profile in found.profiles:
        _echo(
            f"  {profile.name:<18} compute {profile.compute_slices}  memory {profile.memory_slices}  "
            f"max {profile.max_instances}  {profile.resource_name}"
        )
    _echo(f"built-in configs: {', '.join(builtin_mig_config_names(found))}")


def _change_sides(sides: tuple[str, ...], base_ref: str | None) -> tuple[Side, Side]:
    """OLD and NEW of ``diff`` and ``plan``; bad sides exit 2 with one line."""
    from .diff import read_sides

    return read_sides(sides, base_ref, _load)


def _plan_command(sides: tuple[str, ...], base_ref: str | None) -> str:
    from .shell import command, render

    words = ["gpustack-gen", "plan", *(["--base", base_ref] if base_ref is not None else []), *sides]
    return render(command(*words))


def _change_arguments(base_help: str, formats: tuple[str, ...], format_help: str) -> Callable[[F], F]:
    """OLD [NEW], --base REF and --format, as ``diff`` and ``plan`` take them."""

    def decorate(command: F) -> F:
        command = click.option(
            "--format",
            "output_format",
            type=click.Choice(formats),
            default="text",
            show_default=True,
            help=format_help,
        )(command)
        command = click.option("--base", "base_ref", metavar="REF", help=base_help)(command)
        return click.argument("sides", nargs=-1, required=True, metavar="OLD [NEW]")(command)

    return decorate


@main.command()
@_change_arguments(
    "Compare FLEET as committed at git REF with the working file.",
    _DIFF_FORMATS,
    "text (coloured on a terminal), markdown (a PR comment), json (stable), github (annotations).",
)
@click.option("--exit-code", is_flag=True, help="Exit 1 when anything differs, 0 when nothing does.")
@_handle_errors
def diff(sides: tuple[str, ...], base_ref: str | None, output_format: str, exit_code: bool) -> None:
    """Show what changes from OLD to NEW: artifacts, capacity per pool, and what the rollout disrupts.

    OLD and NEW are fleet files or rendered folders (capacity and impact need fleet files).
    `gpustack-gen plan` with the same arguments gives the steps in order.

    \b
    gpustack-gen diff old/fleet.yaml fleet.yaml
    gpustack-gen diff --base origin/main fleet.yaml --format markdown
    """
    from .diff import diff_sides
    from .diff.report import DIFF_REPORTS, ReportContext

    old, new = _change_sides(sides, base_ref)
    result = diff_sides(old, new)
    context = ReportContext(
        color=_colored(output_format),
        annotation_file=new.path,
        plan_command=_plan_command(sides, base_ref),
    )
    _echo_report(DIFF_REPORTS[output_format](result, context), output_format, styled=context.color)
    if exit_code and not result.empty:
        sys.exit(ExitCode.DIFFERS)


_LIVE_VALUES_LIMIT = 8 * 1024 * 1024  # bytes of `helm get values -o json` read from stdin


@main.command("values-kept")
@click.argument("values", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@_handle_errors
def values_kept(values: tuple[str, ...]) -> None:
    """Check that a GPU Operator upgrade with VALUES keeps the release's values: read `helm get values RELEASE -o
    json` on stdin and exit 1 naming each key it sets that no file of VALUES sets (helm upgrade would drop it),
    but for the keys gpustack-gen owns. No input (no release yet) passes. plan runs it before each helm upgrade
    of the GPU Operator."""
    from ruamel.yaml.error import YAMLError

    from .helm_values import MERGED_LISTS, dropped_keys
    from .validate.operator_keys import VALUES_KEYS
    from .yamlio.input_file import InputFileError, read_input_bytes
    from .yamlio.limits import MAX_IMPORT_INPUT_BYTES
    from .yamlio.load import load_data

    text = sys.stdin.read(_LIVE_VALUES_LIMIT + 1)
    if len(text) > _LIVE_VALUES_LIMIT:
        _echo(f"error: stdin: more than {_LIVE_VALUES_LIMIT} bytes of values", err=True)
        sys.exit(ExitCode.INVALID)
    try:
        live = json.loads(text) if text.strip() else None
    except (json.JSONDecodeError, ValueError) as exc:  # ValueError: an integer past Python's digit limit
        where = f"{exc.lineno}:{exc.colno}: not JSON ({exc.msg})" if isinstance(exc, json.JSONDecodeError) else str(exc)
        _echo(f"error: stdin:{where}; pipe helm get values -o json", err=True)
        sys.exit(ExitCode.INVALID)
    if live is not None and not isinstance(live, dict):
        _echo("error: stdin: not a values object; pipe helm get values -o json", err=True)
        sys.exit(ExitCode.INVALID)
    passed = []
    for path in values:
        try:
            passed.append(load_data(read_input_bytes(Path(path), MAX_IMPORT_INPUT_BYTES).decode("utf-8")))
        except (InputFileError, UnicodeDecodeError, YAMLError) as exc:
            _echo(f"error: {path}: {exc}", err=True)
            sys.exit(ExitCode.INVALID)
    dropped = dropped_keys(live or {}, passed, tuple(gate.path for gate in VALUES_KEYS))
    if dropped:
        merged = [key for key in dropped if key in MERGED_LISTS]
        hint = "keep them in a values file listed in the fleet's operator.valuesFiles"
        if merged:
            hint += (
                f"; {', '.join(merged)} is set by gpustack-gen's values file too (the chart's default and what the "
                "pools' taints need), which comes last: give the pools that need those items their taints in the fleet"
            )
        _echo(f"error: the release has values the upgrade would drop: {', '.join(dropped)} (hint: {hint})", err=True)
        sys.exit(ExitCode.DIFFERS)
    _echo(f"the upgrade keeps every value the release has ({len(values)} files)")


_LISTING_LIMIT = 256 * 1024 * 1024  # bytes of `kubectl get nodes,pods,pdb -o json` read from stdin (large clusters)


@main.command("blockers")
@click.option("--selector", required=True, help="The nodes to check, as key=value[,key=value] (a pool's selector).")
@click.option(
    "--budgets",
    type=click.Choice(["batch", "whole-pool"]),
    help="Fail on PodDisruptionBudgets that would hold a drain of the nodes: a batch at a time, or all at once.",
)
@click.option("--bare-pods", is_flag=True, help="Fail on GPU pods without a controller on the nodes.")
@_handle_errors
def blockers(selector: str, budgets: str | None, bare_pods: bool) -> None:
    """Check what would stop a drain or a driver upgrade of the nodes SELECTOR matches: read `kubectl get
    nodes,pods,pdb --all-namespaces -o json` on stdin and exit 1 naming each blocker. plan runs it in the pre-flight
    of a drain (--budgets) and before a driver change (--bare-pods)."""
    from .change.blockers import (
        ListingError,
        SelectorError,
        bare_gpu_pods,
        blocking_budgets,
        load_listing,
        parse_selector,
    )

    if budgets is None and not bare_pods:
        _echo("error: nothing to check: give --budgets or --bare-pods", err=True)
        sys.exit(ExitCode.INVALID)
    text = sys.stdin.read(_LISTING_LIMIT + 1)
    if len(text) > _LISTING_LIMIT:
        _echo(f"error: stdin: more than {_LISTING_LIMIT} bytes of listing", err=True)
        sys.exit(ExitCode.INVALID)
    try:
        nodes = parse_selector(selector)
    except SelectorError as exc:
        _echo(f"error: --selector: {exc}", err=True)
        sys.exit(ExitCode.INVALID)
    try:
        listing = load_listing(text)
        found = []
        if budgets is not None:
            found += [
                f"PodDisruptionBudget {b}" for b in blocking_budgets(listing, nodes, whole_pool=budgets == "whole-pool")
            ]
        if bare_pods:
            found += [f"pod {p} has no controller" for p in bare_gpu_pods(listing, nodes)]
    except (json.JSONDecodeError, ListingError) as exc:
        _echo(f"error: {exc}; pipe kubectl get nodes,pods,pdb --all-namespaces -o json", err=True)
        sys.exit(ExitCode.INVALID)
    if found:
        hint = []
        if budgets is not None:
            hint.append(
                "relax or delete a budget, or scale its workload up"
                if budgets == "batch"
                else "relax or delete a budget (its evicted pods cannot start on the pool while it is drained)"
            )
        if bare_pods:
            hint.append(
                "save its work and delete it, or set operator.driver.upgradePolicy.force in the fleet to let the upgrade delete it"
            )
        _echo(f"error: {'; '.join(found)} (hint: {'; '.join(hint)})", err=True)
        sys.exit(ExitCode.DIFFERS)
    _echo(f"nothing blocks on {selector}")


@main.command()
@_change_arguments(
    "Plan from FLEET as committed at git REF to the working file.",
    _PLAN_FORMATS,
    "text (a runbook), markdown (a PR comment), json (stable: docs/commands/plan.md).",
)
@click.option(
    "--rendered",
    default="rendered",
    show_default=True,
    help="The folder `gpustack-gen render NEW --out` wrote into, relative to where you run the commands.",
)
@click.option("--cluster", "clusters", multiple=True, help="Only this cluster (repeatable).")
@click.option(
    "--write-retired",
    is_flag=True,
    help="First add to NEW the retired entries a refused change needs (comments kept), then plan with them.",
)
@_handle_errors
def plan(
    sides: tuple[str, ...],
    base_ref: str | None,
    rendered: str,
    clusters: tuple[str, ...],
    output_format: str,
    write_retired: bool,
) -> None:
    """Print the ordered rollout of the change from OLD to NEW, per cluster: each step's command, check and reason.

    Exit 0 with the plan; 1 when a cluster's change cannot be rolled out as written (the errors say what
    to add); 2 on bad input.

    \b
    gpustack-gen plan old/fleet.yaml fleet.yaml
    gpustack-gen plan --base origin/main fleet.yaml --rendered rendered --format markdown
    gpustack-gen plan --base origin/main fleet.yaml --write-retired
    """
    from .plan import plan_sides
    from .plan.report import PLAN_REPORTS, ReportContext

    old, new = _change_sides(sides, base_ref)
    unknown = sorted(set(clusters) - {c.name for side in (old, new) if side.fleet for c in side.fleet.clusters})
    if unknown:
        raise click.BadParameter(f"no cluster named {', '.join(unknown)} in either fleet", param_hint="--cluster")
    if write_retired:
        from .plan.write_retired import write_retired_sides

        new, added = write_retired_sides(old, new, clusters or None)
        for name in added:
            _echo(
                f"wrote the retired entries cluster {name} needs to {new.path}; commit them with the change", err=True
            )
    fleet_dir = Path(os.path.relpath(Path(new.path or ".").parent)).as_posix()
    result = plan_sides(old, new, rendered=rendered, fleet_dir=fleet_dir, clusters=clusters or None)
    from .shell import command
    from .shell import render as render_command

    render = render_command(command("gpustack-gen", "render", new.path or sides[-1], "--out", rendered))
    context = ReportContext(color=_colored(output_format), render_command=render)
    _echo_report(PLAN_REPORTS[output_format](result, context), output_format, styled=context.color)
    sys.exit(result.exit_code)


@main.command()
@click.argument("fleet", type=click.Path(dir_okay=False))
@click.option("--cluster", "cluster_name", help="The cluster of FLEET to check.")
@click.option(
    "--all",
    "every_cluster",
    is_flag=True,
    help="Check every cluster of FLEET, each through its own kube context: one summary table, each cluster's "
    "report, the worst exit code.",
)
@click.option(
    "--from",
    "state_dir",
    type=click.Path(file_okay=False),
    help="Read the cluster from the kubectl output in this folder (nodes.json, clusterpolicy.json, configmaps.json, "
    "operator.json, events.json, and hami.json on HAMi, nvdp.json on the standalone device plugin; each optional) "
    "instead of the API.",
)
@click.option(
    "--kubeconfig", type=click.Path(dir_okay=False), help="Kubeconfig file (default: $KUBECONFIG, ~/.kube/config)."
)
@click.option("--context", "context_name", help="Kubeconfig context (default: the cluster's kubeContext, or its name).")
@click.option(
    "--rendered",
    default="rendered",
    show_default=True,
    help="The folder `gpustack-gen render FLEET --out` wrote into, as the fix commands name it.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(_VERIFY_FORMATS),
    default="text",
    show_default=True,
    help="text (coloured on a terminal), json (stable), markdown (an issue or PR comment), github (annotations).",
)
@_handle_errors
def verify(
    fleet: str,
    cluster_name: str,
    state_dir: str | None,
    kubeconfig: str | None,
    context_name: str | None,
    rendered: str,
    output_format: str,
    every_cluster: bool,
) -> None:
    """Check a running cluster against FLEET, node by node: what each pool's nodes advertise (and register with HAMi),
    their labels and GPU, the ClusterPolicy, the ConfigMaps, the Operator's DaemonSets and HAMi's workloads; each
    finding says the likely cause and the fix.

    Read-only: it only lists and gets; without --from it runs the kubeconfig's exec credential plugin, as kubectl
    does. Exit 0 when the cluster matches; 1 when a finding is an error; 4 when nothing differs but nodes
    mid-rollout (MIG repartitioning, a driver upgrade, cordoned); 2 on bad input or an unreachable cluster. See
    docs/verify.md.

    \b
    gpustack-gen verify fleet.yaml --cluster prod                 # context prod (the cluster's kubeContext)
    gpustack-gen verify fleet.yaml --cluster prod --from state/   # kubectl output (docs/reference/verify-inputs.md)
    gpustack-gen verify fleet.yaml --all                          # every cluster, each through its own context
    """
    from .verify import read_state_dir, verify_cluster
    from .verify.report import VERIFY_REPORTS, ReportContext

    loaded = _load(fleet)
    if every_cluster:
        if cluster_name is not None or state_dir is not None or context_name is not None:
            raise click.UsageError(
                "--all reads every cluster through its own context: give no --cluster, --from or --context"
            )
        _verify_every_cluster(loaded, fleet, kubeconfig, rendered, output_format)
    if cluster_name is None:
        raise click.UsageError("give --cluster NAME, or --all")
    cluster = loaded.cluster(cluster_name)
    if cluster is None:
        names = ", ".join(c.name for c in loaded.clusters)
        raise click.BadParameter(
            f"no cluster named {cluster_name!r} in {fleet} (clusters: {names})", param_hint="--cluster"
        )
    if state_dir is not None and (kubeconfig is not None or context_name is not None):
        raise click.UsageError("--from reads files, --kubeconfig and --context read the API: give one or the other")
    if context_name is not None:  # the hints' commands name the context verify read
        cluster = dataclasses.replace(cluster, kube_context=context_name)
    if state_dir is not None:
        state = read_state_dir(Path(state_dir), cluster)
    else:
        from .verify.live import read_live_state

        state = read_live_state(cluster, kubeconfig=kubeconfig, context=cluster.kube_context)
    result = verify_cluster(cluster, state, fleet_label=fleet, rendered=rendered)
    context = ReportContext(color=_colored(output_format), annotation_file=fleet)
    _echo_report(VERIFY_REPORTS[output_format](result, context), output_format, styled=context.color)
    sys.exit(result.exit_code)


def _verify_every_cluster(loaded: Fleet, fleet: str, kubeconfig: str | None, rendered: str, output_format: str) -> None:
    from .verify import verify_cluster
    from .verify.fleet_report import FLEET_REPORTS
    from .verify.fleet_run import kube_context_of, verify_fleet
    from .verify.live import read_live_state
    from .verify.report import ReportContext

    if output_format not in FLEET_REPORTS:
        raise click.UsageError(f"--all reports as {' or '.join(FLEET_REPORTS)}, not {output_format}")
    result = verify_fleet(
        loaded.clusters,
        kube_context_of,
        lambda cluster, context: read_live_state(cluster, kubeconfig=kubeconfig, context=context),
        lambda cluster, state: verify_cluster(cluster, state, fleet_label=fleet, rendered=rendered),
        fleet_label=fleet,
    )
    click.echo(FLEET_REPORTS[output_format](result, ReportContext(color=_colored(output_format))), nl=False)
    sys.exit(result.exit_code)


@main.command()
@click.option(
    "--cluster",
    "clusters",
    multiple=True,
    help="Name of a cluster, a DNS label (repeatable; default: gpu-cluster).",
)
@click.option(
    "--gpu", "gpus", multiple=True, help="GPU model of a node pool, catalog id or product label (repeatable)."
)
@click.option("--operator-version", help="GPU Operator chart version (default: the newest known).")
@click.option(
    "--schema",
    "schema_ref",
    help="What the yaml-language-server modeline names. Default: fleet.schema.json, written beside OUT (the "
    "schema file installed with gpustack-gen when OUT is -).",
)
@click.option("--out", "out_path", default="fleet.yaml", show_default=True, help="File to write; - prints it.")
@click.option("--force", is_flag=True, help="Overwrite OUT if it exists (and nothing else: never the schema file).")
@_handle_errors
def init(
    clusters: tuple[str, ...],
    gpus: tuple[str, ...],
    operator_version: str | None,
    schema_ref: str | None,
    out_path: str,
    force: bool,
) -> None:
    """Write a commented starter fleet file: each --cluster with one node pool per --gpu.

    Beside it, fleet.schema.json (unless --schema names another), which its first line points editors at:
    commit both, and the schema resolves offline on every machine that checks the repository out.
    """
    from .init import FLEET_SCHEMA, InitError, init_fleet_text, write_starter

    name = "fleet.yaml" if out_path == "-" else Path(out_path).name
    beside = schema_ref is None and out_path != "-"
    try:
        text = init_fleet_text(
            clusters, gpus, operator_version, schema=FLEET_SCHEMA if beside else schema_ref, out_name=name
        )
    except InitError as exc:
        raise click.BadParameter(str(exc), param_hint=exc.option) from None
    if out_path == "-":
        _echo(text, nl=False)
        return
    for written in write_starter(Path(out_path), text, force=force, schema_beside=beside):
        if written.name == FLEET_SCHEMA and written != Path(out_path):
            _echo(f"{written}: written (the fleet file's JSON Schema; regenerate with gpustack-gen schema)")
    _echo(f"{out_path}: written; check it with gpustack-gen validate {out_path}")


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=True))
@click.option(
    "--operator-version",
    default=None,
    help="GPU Operator version to check against (default: newest known); sets the device-plugin version too.",
)
@click.option(
    "--namespace",
    default="gpu-operator",
    show_default=True,
    help="Namespace the GPU Operator runs in: ConfigMaps must be there.",
)
@click.option(
    "--kubernetes-version",
    default=None,
    help="Kubernetes version for ConfigMap and pod-spec checks, such as 1.29 (default: newest schema).",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(_LINT_FORMATS),
    default="text",
    show_default=True,
    help="text: file:line:col lines; json: one object; github: workflow annotations.",
)
@_handle_errors
def lint(
    files: tuple[str, ...],
    operator_version: str | None,
    namespace: str,
    kubernetes_version: str | None,
    output_format: str,
) -> None:
    """Check hand-written device-plugin / mig-parted configs, ConfigMaps, ClusterPolicies and values files.

    Exit 0: no errors (warnings allowed); 1: errors found; 2: a file could not be read or parsed.
    """
    from .lint import default_options, format_report, lint_files

    release = None if operator_version is None else _operator_version(operator_version)
    if kubernetes_version is not None:
        from .validate.kubernetes import parse_minor

        try:
            parse_minor(kubernetes_version)
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
    report = lint_files(files, default_options(release, namespace, kubernetes_version))
    _echo_report(format_report(report, output_format), output_format)
    sys.exit(report.exit_code)


@main.command("import")
@click.option("--cluster", "cluster_name", required=True, help="Name of the cluster in the fleet file.")
@click.option("--values", "values_file", type=click.Path(dir_okay=False), help="GPU Operator Helm values file.")
@click.option(
    "--configmap",
    "configmap_files",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="Device-plugin or mig-parted ConfigMaps (repeatable; multi-document files and Lists welcome).",
)
@click.option(
    "--clusterpolicy",
    "clusterpolicy_file",
    type=click.Path(dir_okay=False),
    help="Output of kubectl get clusterpolicy cluster-policy -o yaml.",
)
@click.option("--nodes", "nodes_file", type=click.Path(dir_okay=False), help="Output of kubectl get nodes -o yaml.")
@click.option(
    "--daemonsets",
    "daemonsets_file",
    type=click.Path(dir_okay=False),
    help="Output of kubectl get daemonset -A -o json (or the plugin's pods): names a standalone device plugin "
    "release's chart version.",
)
@click.option("--kubernetes", help="Kubernetes version, when the nodes do not tell it (e.g. 1.29.15).")
@click.option("--operator-version", help="GPU Operator chart version, when the inputs do not tell it (e.g. v25.3.3).")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), help="Write the fleet file here (default: stdout).")
@click.option("--force", is_flag=True, help="Overwrite the --out file if it exists.")
@click.option(
    "--check-roundtrip",
    is_flag=True,
    help="Render the imported fleet and compare it with the inputs; exit 1 when something the model owns would change.",
)
@_handle_errors
def import_command(
    cluster_name: str,
    values_file: str | None,
    configmap_files: tuple[str, ...],
    clusterpolicy_file: str | None,
    nodes_file: str | None,
    daemonsets_file: str | None,
    kubernetes: str | None,
    operator_version: str | None,
    out_file: str | None,
    force: bool,
    check_roundtrip: bool,
) -> None:
    """Turn a cluster's GPU Operator values, ConfigMaps, ClusterPolicy and nodes into a fleet file.

    A standalone nvidia-device-plugin release's values (helm get values nvdp -o yaml), its ConfigMap and
    --daemonsets give a fleet with backend device-plugin.

    \b
    kubectl get nodes -o yaml > nodes.yaml
    kubectl get configmap -n gpu-operator time-slicing-config -o yaml > configmaps.yaml
    gpustack-gen import --cluster prod --values values.yaml --configmap configmaps.yaml \\
        --nodes nodes.yaml --out fleet.yaml --check-roundtrip
    """

    from .importer import check_roundtrip as roundtrip
    from .importer import import_cluster

    def path(text: str | None) -> Path | None:
        return None if text is None else Path(text)

    if out_file is not None and not force and (Path(out_file).exists() or Path(out_file).is_symlink()):
        raise click.UsageError(f"{out_file} already exists; pass --force to overwrite it")
    result = import_cluster(
        cluster_name,
        values=path(values_file),
        configmaps=[Path(p) for p in configmap_files],
        clusterpolicy=path(clusterpolicy_file),
        nodes=path(nodes_file),
        kubernetes=kubernetes,
        operator_version=operator_version,
        daemonsets=path(daemonsets_file),
    )
    for todo in result.todos:
        _echo(f"warning: TODO: {todo}", err=True)
    for warning in result.warnings:
        _echo(f"warning: {warning}", err=True)
    values = result.values_file
    if out_file is None:
        _echo(result.fleet_text, nl=False)
        if values is not None:
            _echo(f"warning: TODO: write {values[0]} beside the fleet file (import --out writes it)", err=True)
    else:
        from .emit.single_file import write_new_file
        from .errors import OutputError

        values_path = Path(out_file).parent / values[0] if values is not None else None
        if not force:  # refuse before writing anything: a values file alone would be half an import
            for target in (Path(out_file), values_path):
                if target is not None and target.exists():
                    raise OutputError(f"{target} already exists; pass --force to overwrite it")
        if values is not None and values_path is not None:  # first: the fleet names it
            write_new_file(values_path, values[1], force=force)
        write_new_file(Path(out_file), result.fleet_text, force=force)
        pools, todos = len(result.plan.pools), len(result.todos)
        summary = f"{out_file}: {pools} pool{'s' if pools != 1 else ''}, {todos} TODO{'s' if todos != 1 else ''}"
        _echo(summary, err=True)
    if not check_roundtrip:
        return
    report = roundtrip(result)
    for line in report.expected:
        _echo(f"expected rename: {line}", err=True)
    for line in report.differences:
        _echo(f"would change: {line}", err=True)
    if report.differences:
        _echo(f"round trip: {len(report.differences)} differences in what the fleet model owns", err=True)
        sys.exit(ExitCode.DIFFERS)
    _echo("round trip: rendering the imported fleet changes nothing the fleet model owns", err=True)
