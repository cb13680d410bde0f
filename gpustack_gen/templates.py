"""Where the jinja2 templates (text for people: PR comments, starter files) are found."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def template_dirs() -> list[Path]:
    """The wheel's ``gpustack_gen/_data/templates``, else the checkout's ``templates/``: those that exist."""
    candidates = [_PACKAGE / "_data" / "templates", _PACKAGE.parent / "templates"]
    return [path for path in candidates if path.is_dir()]
