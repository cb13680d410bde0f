"""mkdocs hook: a nav entry whose value is a folder (``Guides: guides/``) lists that folder's pages.

So a new page under ``docs/guides/``, ``docs/commands/`` or ``docs/changes/`` appears in the navigation
without an edit to ``mkdocs.yml``: ``index.md`` first, the others by title, each titled by its first heading.
A folder without pages drops its entry. Only the standard library, since mkdocs loads this file by path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def on_config(config: Any) -> Any:
    docs = Path(config["docs_dir"])
    config["nav"] = _expand(config["nav"] or [], docs)
    return config


def _expand(items: list[Any], docs: Path) -> list[Any]:
    expanded: list[Any] = []
    for item in items:
        if not isinstance(item, dict):
            expanded.append(item)
            continue
        ((title, value),) = item.items()
        if isinstance(value, list):
            expanded.append({title: _expand(value, docs)})
        elif isinstance(value, str) and value.endswith("/"):
            pages = _folder(docs, value)
            if pages:
                expanded.append({title: pages})
        else:
            expanded.append(item)
    return expanded


def _folder(docs: Path, folder: str) -> list[dict[str, str]]:
    pages = [(_title(path), path.relative_to(docs).as_posix()) for path in (docs / folder).glob("*.md")]
    pages.sort(key=lambda page: (not page[1].endswith("/index.md"), page[0].lower()))
    return [{title: path} for title, path in pages]


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem
