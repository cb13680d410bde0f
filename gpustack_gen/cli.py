"""The ``gpustack-gen`` command: a thin layer that calls the library, prints, and sets the exit code.

Exit codes: 0 ok; 1 differences (``render --check``); 2 invalid input, usage or output error;
3 internal error (a bug: please report it).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from . import __version__

if TYPE_CHECKING:
    from .errors import Problem
    from .model import Fleet

EXIT_OK, EXIT_DIFFERS, EXIT_INVALID, EXIT_INTERNAL = 0, 1, 2, 3

F = TypeVar("F", bound=Callable[..., Any])


def _print_problems(problems: Sequence[Problem]) -> None:
    for problem in problems:
        click.echo(problem.format(), err=True)


def _handle_errors(command: F) -> F:
    """Map library errors to messages and exit codes; anything unexpected is an internal error."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from .errors import FleetError, InternalError, OutputError

        debug = click.get_current_context().find_root().params.get("debug", False)
        try:
            return command(*args, **kwargs)
        except FleetError as exc:
            _print_problems(exc.problems)
            errors = len(exc.errors)
            click.echo(f"{errors} error{'s' if errors != 1 else ''}; nothing was written.", err=True)
            sys.exit(EXIT_INVALID)
        except OutputError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_INVALID)
        except InternalError as exc:
            click.echo(
                f"internal error: generated {exc} (gpustack-gen {__version__}); nothing was written. "
                "This is a bug: please report it.",
                err=True,
            )
            sys.exit(EXIT_INTERNAL)
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:
            if debug:
                raise
            click.echo(
                f"internal error: {type(exc).__name__}: {exc} (gpustack-gen {__version__}). "
                "This is a bug: please report it, with the output of --debug.",
                err=True,
            )
            sys.exit(EXIT_INTERNAL)

    return wrapper  # type: ignore[return-value]


def _load(path: str) -> Fleet:
    from .model import load_fleet

    fleet = load_fleet(Path(path))
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
    click.echo(f"{fleet}: ok ({len(loaded.clusters)} clusters, {pools} pools)")


@main.command()
@click.argument("fleet", type=click.Path(dir_okay=False))
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Output folder.")
@click.option("--cluster", "clusters", multiple=True, help="Render only this cluster (repeatable).")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 and list what differs when OUT is not up to date.")
@_handle_errors
def render(fleet: str, out_dir: str, clusters: tuple[str, ...], check: bool) -> None:
    """Render FLEET into OUT/<cluster>/ atomically."""
    from .rendering import render as render_fleet

    bundle = render_fleet(_load(fleet), clusters or None)
    if check:
        drift = bundle.drift(out_dir)
        if drift.clean:
            click.echo(f"{out_dir}: up to date ({len(bundle.files)} files)")
            return
        for label, paths in (("missing", drift.missing), ("changed", drift.changed), ("stale", drift.stale)):
            for path in paths:
                click.echo(f"{label}: {Path(out_dir) / path}")
        click.echo(f"{out_dir} is not up to date: run gpustack-gen render {fleet} --out {out_dir}", err=True)
        sys.exit(EXIT_DIFFERS)
    summary = bundle.write(out_dir)
    click.echo(
        f"{out_dir}: {len(summary.written)} written, {len(summary.unchanged)} unchanged, {len(summary.removed)} removed"
    )


@main.command()
def schema() -> None:
    """Print the fleet file's JSON Schema (also in schemas/fleet.schema.json)."""
    from .model.intent import fleet_json_schema

    click.echo(json.dumps(fleet_json_schema(), indent=2, sort_keys=False))


@main.command()
def versions() -> None:
    """List the GPU Operator versions gpustack-gen knows and what each ships."""
    from .versions import OPERATOR_VERSIONS

    click.echo(f"{'operator':<10} {'device-plugin':<14} {'mig-manager':<12} cdi-default  mps  verified")
    for v in OPERATOR_VERSIONS:
        click.echo(
            f"{v.version:<10} {v.device_plugin:<14} {v.mig_manager:<12} "
            f"{'on' if v.cdi_enabled_by_default else 'off':<12} {'yes' if v.has_mps else 'no':<4} "
            f"{'yes' if v.verified else 'no'}"
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
            click.echo(f"{model.id:<30} {model.name:<32} {mig:<7} {', '.join(model.product_labels)}")
        return
    found = get_gpu(gpu)
    if found is None:
        close = suggest_gpus(gpu)
        raise click.UsageError(f"unknown GPU {gpu!r}" + (f"; did you mean {' or '.join(close)}?" if close else ""))
    click.echo(f"{found.id}: {found.name} ({found.architecture})")
    click.echo(f"product labels: {', '.join(found.product_labels) or '-'}")
    if not found.mig_capable:
        click.echo("MIG: not supported; share it with time-slicing or mps")
        return
    click.echo(f"MIG: {found.compute_slices} compute / {found.memory_slices} memory slices")
    for profile in found.profiles:
        click.echo(
            f"  {profile.name:<18} compute {profile.compute_slices}  memory {profile.memory_slices}  "
            f"max {profile.max_instances}  {profile.resource_name}"
        )
    click.echo(f"built-in configs: {', '.join(builtin_mig_config_names(found))}")
