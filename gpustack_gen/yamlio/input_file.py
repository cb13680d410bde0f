"""Reading an input file within a budget: every reader of a user's file (fleet, values, ConfigMaps, nodes, state
files, lint inputs) opens it here.

Only a regular file is read (a symlink to one is fine): a FIFO blocks until a writer comes and ``/dev/zero`` never
ends, and ``stat().st_size`` is 0 for both, so a size check on it admits them (CPython ``Doc/library/os.rst``,
``stat_result.st_size``). The file is opened without blocking, checked with ``fstat`` on the open descriptor (no
race with a rename), and read to at most ``limit + 1`` bytes: the cap counts the bytes actually read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["InputFileError", "read_input_bytes"]

_CHUNK = 1024 * 1024


class InputFileError(Exception):
    """The file cannot be read as an input; ``reason`` is the message that follows its name.

    ``missing``: there is no such file; ``too_large``: it is larger than the limit.
    """

    def __init__(self, reason: str, *, missing: bool = False, too_large: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.missing = missing
        self.too_large = too_large


def read_input_bytes(path: Path, limit: int) -> bytes:
    """The bytes of the regular file ``path``; raises :class:`InputFileError` for anything else or over ``limit``."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError as exc:
        raise InputFileError(f"cannot read file: {exc.strerror or exc}", missing=True) from None
    except OSError as exc:
        raise InputFileError(f"cannot read file: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(handle).st_mode
        if not stat.S_ISREG(mode):
            raise InputFileError(f"not a regular file but {_kind(mode)}: inputs are read from regular files only")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(handle, min(_CHUNK, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise InputFileError(f"cannot read file: {exc.strerror or exc}") from None
    finally:
        os.close(handle)
    if size > limit:
        raise InputFileError(f"larger than {limit:,} bytes, the limit", too_large=True)
    return b"".join(chunks)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"
