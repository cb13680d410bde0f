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
from .versions import NEWEST_OPERATOR, UnknownOperatorVersion, require_operator_version

TEMPLATE = "init-fleet.yaml.j2"
FLEET_SCHEMA = "fleet.schema.json"
DEFAULT_CLUSTER = "gpu-cluster"
DEFAULT_GPU = "tesla-t4"
DEFAULT_KUBERNETES = "1.31.0"

__all__ = ["InitError", "init_fleet_text"]


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
