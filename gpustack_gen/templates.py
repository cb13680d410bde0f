"""The jinja2 templates (text for people: PR comments, starter files): where they are, and the environment
the reports render them with."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import OutputError

if TYPE_CHECKING:
    from jinja2 import Environment

_PACKAGE = Path(__file__).resolve().parent


def template_dirs() -> list[Path]:
    """The wheel's ``gpustack_gen/_data/templates``, else the checkout's ``templates/``: those that exist."""
    candidates = [_PACKAGE / "_data" / "templates", _PACKAGE.parent / "templates"]
    return [path for path in candidates if path.is_dir()]


@cache
def environment() -> Environment:
    """A jinja2 environment with autoescape on (every user string is HTML-escaped unless marked safe)."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    dirs = template_dirs()
    if not dirs:
        raise OutputError("no templates folder found (looked in gpustack_gen/_data/templates and templates/)")
    return Environment(
        loader=FileSystemLoader([str(d) for d in dirs]),
        autoescape=True,
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
