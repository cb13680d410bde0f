"""Find and load the jinja2 templates: the wheel's ``gpustack_gen/_data/templates``, else the repo's ``templates/``."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from ..errors import OutputError
from ..templates import template_dirs

if TYPE_CHECKING:
    from jinja2 import Environment


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
