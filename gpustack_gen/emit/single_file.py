"""Write one file atomically (a fleet file from ``init`` or ``import``), never leaving a partial one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import OutputError


def write_new_file(path: Path, text: str, *, force: bool = False) -> None:
    """Write ``text`` to ``path``; without ``force`` an existing file is an :class:`OutputError`."""
    if path.is_dir():
        raise OutputError(f"{path} is a folder")
    try:
        if not force:
            with path.open("x", encoding="utf-8", newline="\n") as stream:  # "x": never clobber
                stream.write(text)
            return
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
                stream.write(text)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except FileExistsError:
        raise OutputError(f"{path} already exists; pass --force to overwrite it") from None
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
