"""Write one file atomically (a fleet file from ``init`` or ``import``), never leaving a partial one.

The text goes to a temporary file beside the target first; a new file is then linked into place (``link`` fails
when the name exists: no check-then-write race), an overwrite replaces it with ``rename``. A full disk or a kill
leaves the target as it was, and the retry does not find a truncated file "already existing".
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from ..errors import OutputError


def write_new_file(path: Path, text: str, *, force: bool = False) -> None:
    """Write ``text`` to ``path``; without ``force`` an existing file is an :class:`OutputError`."""
    if path.is_dir():
        raise OutputError(f"{path} is a folder")
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
                stream.write(text)
                stream.flush()
                os.fsync(stream.fileno())
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)
            if force:
                os.replace(temporary, path)
            else:
                _link_new(temporary, path)
        finally:
            Path(temporary).unlink(missing_ok=True)
    except FileExistsError:
        raise OutputError(f"{path} already exists; pass --force to overwrite it") from None
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None


def _link_new(temporary: str, path: Path) -> None:
    """``temporary`` under the name ``path``, which must not exist (FileExistsError)."""
    try:
        os.link(temporary, path)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK, errno.EXDEV):
            raise
        # No hard links on this file system: a rename, after the one check it allows.
        if path.exists() or path.is_symlink():
            raise FileExistsError(errno.EEXIST, "exists", str(path)) from None
        os.replace(temporary, path)
