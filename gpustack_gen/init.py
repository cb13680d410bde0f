"""``gpustack-gen init``: a commented starter fleet file, built from a template as text for people.

Every value is checked before it reaches the template (the cluster name as a DNS label, each GPU
against the catalog, the Operator version against the known ones), and is written as a quoted YAML
string all the same. The result is a file that ``validate`` accepts as written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .catalog import builtin_mig_config, get_gpu, suggest_gpus
from .errors import OutputError
from .model.names import dns_label_hint, explain_dns_label
from .templates import template_dirs
from .validate.schema_files import schema_path
from .versions.gpu_operator import NEWEST_OPERATOR, UnknownOperatorVersion, require_operator_version

TEMPLATE = "init-fleet.yaml.j2"
FLEET_SCHEMA = "fleet.schema.json"
DEFAULT_CLUSTER = "gpu-cluster"
DEFAULT_GPU = "tesla-t4"
DEFAULT_KUBERNETES = "1.31.0"

__all__ = ["InitError", "init_fleet_text", "write_starter"]


class InitError(ValueError):
    """An option of ``init`` that cannot be used: ``option`` names it, the message says why."""

    def __init__(self, option: str, message: str) -> None:
        self.option = option
        super().__init__(message)


@dataclass(frozen=True)
class _Pool:
    name: str
    gpu: str
    title: str
    mig: bool
    devices: str  # the all-balanced instances per GPU, for the comment
    first_profile: str


def _template_dirs() -> list[Path]:
    return [folder for folder in template_dirs() if (folder / TEMPLATE).is_file()]


@cache
def _environment() -> Any:
    import jinja2

    folders = _template_dirs()
    if not folders:
        raise OutputError(f"template {TEMPLATE} not found in gpustack_gen/_data/templates or templates/")
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(f) for f in folders]),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # YAML, not HTML: every value goes through yaml_str or comment instead
        keep_trailing_newline=True,
    )
    env.filters["yaml_str"] = _yaml_str
    env.filters["comment"] = _comment
    return env


def _yaml_str(value: object) -> str:
    """A double-quoted YAML scalar: a JSON string is one, whatever characters it holds."""
    return json.dumps(str(value), ensure_ascii=True)


def _comment(value: object) -> str:
    """Text safe inside a comment line: one line, printable."""
    return "".join(c if c.isprintable() else "?" for c in " ".join(str(value).split()))


def _pools(gpus: Sequence[str]) -> list[_Pool]:
    pools: list[_Pool] = []
    seen: set[str] = set()
    for requested in gpus or (DEFAULT_GPU,):
        gpu = get_gpu(requested)
        if gpu is None:
            close = suggest_gpus(requested)
            hint = f"; did you mean {' or '.join(close)}?" if close else "; `gpustack-gen gpus` lists them"
            raise InitError("--gpu", f"unknown GPU {requested!r}{hint}")
        if gpu.id in seen:
            continue
        seen.add(gpu.id)
        entry = builtin_mig_config(gpu, "all-balanced") if gpu.mig_capable else None
        devices = entry.mig_devices if entry is not None else ()
        mig = bool(devices)
        labels = ", ".join(gpu.product_labels) or "no product label known"
        pools.append(
            _Pool(
                name=gpu.id,
                gpu=gpu.id,
                title=f"{gpu.name} ({labels})",
                mig=mig,
                devices=", ".join(f"{count} x {profile}" for profile, count in devices),
                first_profile=devices[0][0] if devices else "",
            )
        )
    return pools


def fleet_schema_text() -> str:
    """The fleet file's JSON Schema as ``gpustack-gen schema`` prints it."""
    import json

    from .model.intent import fleet_json_schema

    return json.dumps(fleet_json_schema(), indent=2, sort_keys=False) + "\n"


def init_fleet_text(
    clusters: str | Sequence[str] = DEFAULT_CLUSTER,
    gpus: Sequence[str] = (),
    operator_version: str | None = None,
    *,
    schema: str | None = None,
    out_name: str = "fleet.yaml",
) -> str:
    """The starter fleet file: each cluster named, with one pool per GPU and the sharing the catalog recommends.

    GPUs with MIG get the Operator's ``all-balanced`` config (and the cluster ``mig.strategy: mixed``),
    the others time-slicing with 4 replicas. ``schema`` is what the yaml-language-server modeline names;
    by default the schema file installed with gpustack-gen, which editors read offline. Raises
    :class:`InitError` for a bad or repeated name, GPU or version.
    """
    names = (clusters,) if isinstance(clusters, str) else tuple(clusters) or (DEFAULT_CLUSTER,)
    for name in names:
        problem = explain_dns_label(name)
        if problem:
            raise InitError("--cluster", f"{problem} ({dns_label_hint(name)})")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise InitError("--cluster", f"cluster {repeated[0]!r} is named twice; cluster names are unique in a fleet")
    release = NEWEST_OPERATOR
    if operator_version is not None:
        try:
            release = require_operator_version(operator_version)
        except UnknownOperatorVersion as unknown:
            raise InitError("--operator-version", f"{unknown}; {unknown.hint}") from None
    pools = _pools(gpus)
    text: str = (
        _environment()
        .get_template(TEMPLATE)
        .render(
            schema=_comment(schema or schema_path(FLEET_SCHEMA).as_uri()),
            out_name=_comment(out_name),
            operator_version=release.version,
            clusters=names,
            kubernetes=DEFAULT_KUBERNETES,
            pools=pools,
            any_mig=any(p.mig for p in pools),
        )
    )
    return text


def write_starter(out: Path, text: str, *, force: bool, schema_beside: bool) -> tuple[Path, ...]:
    """Write the starter fleet ``text`` to ``out`` and, with ``schema_beside``, the fleet schema beside it.

    Everything is checked before anything is written: an existing ``out`` is refused unless ``force`` (which
    overwrites ``out`` and nothing else), and a schema file beside it that differs from this version's is the
    user's: refused, never overwritten. Each write is atomic; when the fleet cannot be written, a schema written
    for it is removed again. Returns the paths written. Raises :class:`OutputError`.
    """
    from .emit.single_file import write_new_file
    from .yamlio.input_file import InputFileError, read_input_bytes

    schema_file = out.parent / FLEET_SCHEMA
    schema_text = fleet_schema_text()
    write_schema = False
    if schema_beside:
        try:
            existing = read_input_bytes(schema_file, 4 * len(schema_text) + 4096)
        except InputFileError as exc:
            if not exc.missing:
                raise OutputError(f"{schema_file}: {exc.reason}") from None
            write_schema = True
        else:
            if existing != schema_text.encode("utf-8"):
                raise OutputError(
                    f"{schema_file} already exists and is not this version's fleet schema: it is left as it is; "
                    f"regenerate it with gpustack-gen schema > {schema_file}, or pass --schema to point at another"
                )
    if out.is_dir():
        raise OutputError(f"{out} is a folder")
    if not force and (out.exists() or out.is_symlink()):
        raise OutputError(f"{out} already exists; pass --force to overwrite it")
    written: list[Path] = []
    if write_schema:
        write_new_file(schema_file, schema_text)
        written.append(schema_file)
    try:
        write_new_file(out, text, force=force)
    except OutputError:
        if write_schema:
            schema_file.unlink(missing_ok=True)
        raise
    return (*written, out)
