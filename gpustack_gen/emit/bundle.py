"""A rendered bundle (relative path -> RenderedFile) and its atomic, confined write to disk.

``Bundle.write(out)`` never changes a file of ``out`` in place, and what it costs follows what changed:

1. Under a lock file beside ``out``, one walk of ``out`` (following no link) finds what is there, and
   each file the bundle writes is compared, byte for byte, with what is on disk.
2. When nothing differs and no generated file is stale, nothing is touched: no write, no flush.
3. Otherwise the deepest folder that holds every change (a cluster's folder when one cluster changed;
   ``out`` itself when several did) is built anew in a private staging folder beside ``out``: each
   folder again, with its mode; a hard link to each file that stays (files that are not ours, ours
   outside the render's scope, ours whose bytes are unchanged: none is copied or rewritten); a new
   file for each one that changed. Stale generated files are left out, and so are folders only they
   filled.
4. One durability barrier, ``syncfs`` of the file system, flushes the staging tree (where there is no
   ``syncfs``, each of its files and folders is fsynced); then one ``renameat2(RENAME_EXCHANGE)``
   swaps it with the folder it replaces, the folder holding that one is fsynced, and the staging
   folder, which now holds the previous files, is removed. Where the file system cannot exchange
   folders, ``out`` is replaced whole, by renames that the next render finishes if interrupted.

Nothing is written through a symbolic link or outside ``out``; a file without our header at a path
we generate is never overwritten; a file in ``out`` is never opened for writing (a linked file belongs
to the previous tree and the new one at once).

What survives what:

- **A kill** (SIGKILL, a crash of the process, a full disk, an error) at any point: ``out`` holds the
  previous files or the new ones, whole and byte-identical, never a mix. The kernel drops the lock;
  the next render removes the staging folder left behind, or finishes an interrupted fallback swap.
- **A power loss or an operating-system crash**: once ``write`` has returned, the new files are on
  disk. Before that, ``out`` holds the previous files or the new ones, whole, because the staging
  tree is flushed before the swap. This needs a file system and a disk that honour flushes (macOS
  ``fsync`` does not reach the disk, nor does anything on a file system mounted without barriers) and
  a journal that makes a rename atomic (ext4 without a journal needs ``fsck`` after a crash). It
  covers what the render writes: a file it links and leaves alone is as durable as whoever wrote it
  last made it, and a render that changes nothing flushes nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import math
import os
import posixpath
import re
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import Any

from ..errors import OutputError
from .header import GENERATED_MARKER, is_generated

LOCK_WAIT_SECONDS = 30.0
LOCK_WAIT_ENV = "GPUSTACK_GEN_LOCK_WAIT"  # seconds a render waits for another one writing the same folder
_PAUSE_ENV = "GPUSTACK_GEN_TEST_PAUSE_BEFORE_SWAP"  # test hook: seconds to sleep before the swap
_RESUME_ENV = "GPUSTACK_GEN_TEST_RESUME_FILE"  # test hook: end that pause early once this file exists
_STAGING_INFIX = ".gpustack-gen.new-"
_MARKER_BYTES = GENERATED_MARKER.encode()


@dataclass(frozen=True)
class RenderedFile:
    path: str  # POSIX path relative to the output folder: "<cluster>/<file>"
    kind: str
    text: str
    documents: tuple[dict[str, Any], ...] = field(repr=False, compare=False)


@dataclass(frozen=True)
class WriteSummary:
    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    removed: tuple[str, ...]


@dataclass(frozen=True)
class Drift:
    """How a folder differs from a bundle (``render --check``)."""

    missing: tuple[str, ...]
    changed: tuple[str, ...]
    stale: tuple[str, ...]

    @property
    def clean(self) -> bool:
        return not (self.missing or self.changed or self.stale)


@dataclass(frozen=True)
class Bundle(Mapping[str, RenderedFile]):
    """Every file of a render: a read-only mapping of relative path -> :class:`RenderedFile`, in a stable order.

    ``files`` is the same mapping; ``scope`` names the cluster folders the render owns (None: the
    whole output folder is its to prune).
    """

    files: Mapping[str, RenderedFile]
    scope: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        files = dict(self.files)
        for rel, rendered in files.items():
            if rendered.path != rel:
                raise ValueError(f"bundle path {rel!r} holds the file of {rendered.path!r}")
        object.__setattr__(self, "files", MappingProxyType(files))

    def __getitem__(self, path: str) -> RenderedFile:
        return self.files[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    def write(
        self,
        out_dir: str | os.PathLike[str],
        *,
        lock_wait: float | None = None,
        on_wait: Callable[[], None] | None = None,
    ) -> WriteSummary:
        """Write atomically: build the new folder beside ``out_dir``, then swap it in.

        ``lock_wait`` is how long to wait for another render writing the same folder (default: the
        ``GPUSTACK_GEN_LOCK_WAIT`` environment variable, else 30 s); ``on_wait`` is called once when
        this render starts waiting. Raises :class:`OutputError` when the folder cannot be written;
        ``out_dir`` is then as it was.
        """
        for rel in self.files:
            _check_relative(rel)
        out = _output_folder(out_dir)
        wait = _lock_wait(lock_wait)
        parent = out.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot create {parent}: {_why(exc)}") from None
        _check_output_folder(out)
        with _lock(parent / f".{out.name}.gpustack-gen.lock", out, wait, on_wait):
            _check_output_folder(out)  # again: another render may have changed it while we waited
            try:
                _recover(out)
            except OSError as exc:
                raise OutputError(f"cannot clean up an interrupted render beside {out}: {_why(exc)}") from None
            return self._swap_in(out, parent)

    def _swap_in(self, out: Path, parent: Path) -> WriteSummary:
        plan = self._plan(out)
        for reason in plan.blocked.values():
            raise OutputError(reason)
        summary = WriteSummary(plan.written, plan.unchanged, plan.stale)
        if plan.tree is not None and not plan.written and not plan.stale:
            return summary  # the folder already holds exactly this render
        # Swap in the deepest folder that holds every change; where the file system cannot exchange two
        # folders, the whole output folder (its fallback swap needs no exchange).
        if plan.folder == "." or not self._replace(out, parent, plan, plan.folder):
            self._replace(out, parent, plan, ".")
        return summary

    def _replace(self, out: Path, parent: Path, plan: _Plan, folder: str) -> bool:
        """Build ``out/folder`` anew beside ``out`` and swap it in; False where it cannot be exchanged."""
        try:
            staging = Path(tempfile.mkdtemp(prefix=f".{out.name}{_STAGING_INFIX}", dir=parent))
        except OSError as exc:
            raise OutputError(f"cannot write beside {out}: {_why(exc)}") from None
        try:
            self._build(staging, out, plan, folder)
            _flush_tree(staging)
            _test_pause()
            if folder == ".":
                _exchange(staging, out)
                _fsync_folder(parent)
            elif not _exchange_inside(staging, out, folder):
                shutil.rmtree(staging)
                return False
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise OutputError(f"cannot write {out}: {_why(exc)}") from None
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        shutil.rmtree(staging, ignore_errors=True)  # after the swap it holds the previous files
        return True

    def drift(self, out_dir: str | os.PathLike[str]) -> Drift:
        """What ``write`` would change: files missing, files that differ, generated files it would remove.

        A path where ``write`` would refuse to write (a hand-written file, a link, a folder) counts as changed.
        """
        plan = self._plan(Path(os.path.abspath(os.fspath(out_dir))))
        missing = set(plan.missing)
        changed = tuple(
            rel for rel in self.files if rel in plan.blocked or (rel in plan.written and rel not in missing)
        )
        return Drift(plan.missing, changed, plan.stale)

    def _owned(self, rel: str) -> bool:
        """Whether a generated file at ``rel`` belongs to this render (and is pruned when not in it)."""
        return self.scope is None or rel.split("/", 1)[0] in self.scope

    def _plan(self, out: Path) -> _Plan:
        """Compare the bundle with ``out`` as it is: one walk, and a bounded read of each file of ours."""
        try:
            tree = _Tree.scan(out) if out.is_dir() and not out.is_symlink() else None
        except OSError as exc:
            raise OutputError(f"cannot read {out}: {_why(exc)}") from None
        entries = tree.entries if tree is not None else {}
        root = os.fspath(out)
        written: list[str] = []
        missing: list[str] = []
        unchanged: list[str] = []
        blocked: dict[str, str] = {}
        for rel, rendered in self.files.items():
            reason = _blocker(out, rel, entries)
            if reason is not None:
                blocked[rel] = reason
            elif rel not in entries:
                written.append(rel)
                missing.append(rel)
            else:
                data = rendered.text.encode()
                start = _read_start(f"{root}/{rel}", len(data) + 1)  # one byte more: a longer file differs
                if not start.startswith(_MARKER_BYTES):
                    blocked[rel] = _not_ours(out / rel)
                elif start == data:
                    unchanged.append(rel)
                else:
                    written.append(rel)
        stale = sorted(
            rel
            for rel, kind in entries.items()
            if kind == stat.S_IFREG
            and rel.endswith(".yaml")
            and rel not in self.files
            and self._owned(rel)
            and not _in_hidden_folder(rel)
            and _read_start(f"{root}/{rel}", len(_MARKER_BYTES)) == _MARKER_BYTES
        )
        emptied = _emptied_folders(entries, written, stale)
        # Where the tree changes: each file written (or the first folder created on its way), each stale
        # file, each emptied folder; the folder to swap is the deepest one that holds them all.
        changes = [_first_missing(rel, entries) for rel in written]
        changes += [rel for rel in (*stale, *emptied) if _folder_of(rel) not in emptied]
        folder = _common_folder([_folder_of(rel) for rel in changes]) if tree is not None else "."
        return _Plan(tree, tuple(written), tuple(missing), tuple(unchanged), tuple(stale), blocked, emptied, folder)

    def _build(self, staging: Path, out: Path, plan: _Plan, folder: str) -> None:
        """Fill ``staging`` with the new ``out/folder``: links to what stays, new files for what changed."""
        default_mode = 0o777 & ~_umask()
        prefix = "" if folder == "." else folder + "/"
        source, target = os.fspath(out), os.fspath(staging)
        modes: dict[str, int] = {}
        if plan.tree is None:
            modes["."] = default_mode
        else:
            modes["."] = stat.S_IMODE(out.stat().st_mode) if folder == "." else plan.tree.folders[folder]
            for rel, mode in plan.tree.folders.items():  # parents before their children
                if rel.startswith(prefix) and rel not in plan.emptied:
                    os.mkdir(f"{target}/{rel[len(prefix) :]}")
                    modes[rel[len(prefix) :]] = mode
            left_out = {*plan.written, *plan.stale}
            for rel, kind in plan.tree.entries.items():
                if kind != stat.S_IFDIR and rel.startswith(prefix) and rel not in left_out:
                    _link(f"{source}/{rel}", f"{target}/{rel[len(prefix) :]}")
        for rel in plan.written:
            inside = rel[len(prefix) :]
            for new_folder in _folders_of(inside):
                if new_folder not in modes:
                    os.mkdir(f"{target}/{new_folder}")
                    modes[new_folder] = default_mode
            _write_new(f"{target}/{inside}", self.files[rel].text.encode())
        # Modes last, deepest first: a read-only folder must not stop the render writing into it.
        for rel in sorted(modes, key=lambda r: 0 if r == "." else r.count("/") + 1, reverse=True):
            os.chmod(f"{target}/{rel}", modes[rel])


@dataclass(frozen=True)
class _Plan:
    tree: _Tree | None  # None: there is no output folder yet
    written: tuple[str, ...]  # paths of the bundle to write, missing or changed, in the bundle's order
    missing: tuple[str, ...]
    unchanged: tuple[str, ...]
    stale: tuple[str, ...]  # generated files of the render's scope that it no longer produces
    blocked: dict[str, str]  # path of the bundle -> why write refuses it
    emptied: frozenset[str]  # folders that only stale files filled: removed with them
    folder: str  # the deepest folder that holds every change ("." for the output folder itself)


@dataclass(frozen=True)
class _Tree:
    """Every entry under a folder, from one walk that follows no link, by relative POSIX path."""

    entries: dict[str, int]  # file type: stat.S_IFDIR, S_IFREG, S_IFLNK, or a FIFO's, a socket's...
    folders: dict[str, int]  # permission bits of each folder, parents before their children

    @classmethod
    def scan(cls, root: Path) -> _Tree:
        entries: dict[str, int] = {}
        folders: dict[str, int] = {}
        pending = [""]
        while pending:
            prefix = pending.pop()
            with os.scandir(f"{root}/{prefix}") as listing:
                for entry in listing:
                    rel = prefix + entry.name
                    if entry.is_dir(follow_symlinks=False):
                        entries[rel] = stat.S_IFDIR
                        folders[rel] = stat.S_IMODE(entry.stat(follow_symlinks=False).st_mode)
                        pending.append(rel + "/")
                    elif entry.is_symlink():
                        entries[rel] = stat.S_IFLNK
                    elif entry.is_file(follow_symlinks=False):
                        entries[rel] = stat.S_IFREG
                    else:  # a FIFO, a socket or a device: linked like any other file, never opened
                        entries[rel] = stat.S_IFMT(entry.stat(follow_symlinks=False).st_mode)
        return cls(entries, folders)


def _blocker(out: Path, rel: str, entries: dict[str, int]) -> str | None:
    """Why ``write`` must not write ``rel``: a link or a file on its way, or a folder or another file at it."""
    parts = rel.split("/")
    for index in range(len(parts)):
        current = "/".join(parts[: index + 1])
        kind = entries.get(current)
        if kind is None:
            return None
        # The path is only built for a reason: a render --check walks every file of the bundle here.
        if kind == stat.S_IFLNK:
            return f"{out / current} is a symbolic link in the output folder; refusing to follow it"
        if index < len(parts) - 1:
            if kind != stat.S_IFDIR:
                return f"{out / current} is not a folder, but gpustack-gen writes {rel} inside it"
        elif kind == stat.S_IFDIR:
            return f"{out / current} is a folder where gpustack-gen writes a file"
        elif kind != stat.S_IFREG:
            return _not_ours(out / current)
    return None


def _not_ours(path: Path) -> str:
    return (
        f"refusing to overwrite {path}: gpustack-gen did not write it (its first line is not "
        f"{GENERATED_MARKER!r}); move it away or delete it"
    )


def _read_start(path: str, size: int) -> bytes:
    """Up to ``size`` bytes from the start of a regular file; b"" when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        chunks = []
        while size > 0 and (chunk := os.read(fd, size)):
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _in_hidden_folder(rel: str) -> bool:
    """Inside a folder such as ``.git``: never ours, whatever it holds."""
    return any(part.startswith(".") for part in rel.split("/")[:-1])


def _folders_of(rel: str) -> list[str]:
    """The folders on the way to ``rel``, outermost first: "a/b/c.yaml" -> ["a", "a/b"]."""
    parts = rel.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _folder_of(rel: str) -> str:
    return rel.rsplit("/", 1)[0] if "/" in rel else "."


def _link(source: str, target: str) -> None:
    """A hard link to ``source`` (a link itself, not followed); a copy where the file system refuses one."""
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError as exc:
        # EPERM: fs.protected_hardlinks and a file of another user; the others: no hard links here.
        if exc.errno not in (errno.EPERM, errno.EMLINK, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        shutil.copy2(source, target, follow_symlinks=False)


def _write_new(path: str, data: bytes) -> None:
    """Create ``path`` (never an existing file, never through a link) holding ``data``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _emptied_folders(entries: dict[str, int], written: list[str], stale: list[str]) -> frozenset[str]:
    """Folders that only the pruning empties (a cluster dropped from the fleet), never others, never the root."""
    if not stale:
        return frozenset()
    left: dict[str, int] = {}
    for rel in entries:
        left[_folder_of(rel)] = left.get(_folder_of(rel), 0) + 1
    receiving = {folder for rel in written for folder in _folders_of(rel)}
    for rel in stale:
        left[_folder_of(rel)] -= 1
    emptied: set[str] = set()
    candidates = {_folder_of(rel) for rel in stale}
    while candidates:
        folder = max(candidates, key=lambda rel: rel.count("/"))  # deepest first: a parent empties after
        candidates.discard(folder)
        if folder == "." or folder in receiving or left.get(folder, 0) > 0:
            continue
        emptied.add(folder)
        left[_folder_of(folder)] -= 1
        candidates.add(_folder_of(folder))
    return frozenset(emptied)


def _first_missing(rel: str, entries: dict[str, int]) -> str:
    """``rel`` itself if it exists, else the outermost folder on its way that does not (the one created)."""
    if rel in entries:
        return rel
    return next((folder for folder in _folders_of(rel) if folder not in entries), rel)


def _common_folder(folders: list[str]) -> str:
    """The deepest folder that holds all of ``folders`` ("." for the output folder itself)."""
    # commonpath compares whole parts ("ab" is not under "a") and gives "" when only the root is shared.
    return (posixpath.commonpath(folders) or ".") if folders else "."


def _check_relative(rel: str) -> None:
    path = PurePosixPath(rel)
    if (
        path.is_absolute()
        or ".." in path.parts
        or not path.parts
        or "\\" in rel
        or "\0" in rel
        or any(part in (".", "") for part in rel.split("/"))
    ):
        raise OutputError(f"refusing to write {rel!r}: not a plain relative path")


def _output_folder(out_dir: str | os.PathLike[str]) -> Path:
    out = Path(os.path.abspath(os.fspath(out_dir)))  # "rendered/", "." and "a/.." get a real name
    if not out.name or out == out.parent:
        raise OutputError(f"refusing to write into {out}: give the rendered files a folder of their own")
    return out


def _check_output_folder(out: Path) -> None:
    if out.is_symlink():
        raise OutputError(f"{out} is a symbolic link; refusing to write through it")
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out} exists and is not a folder")
    # The whole folder is swapped for a new one: a shell standing in it would be left in a deleted directory.
    cwd = Path.cwd().resolve()
    if out.is_dir() and (cwd == out.resolve() or out.resolve() in cwd.parents):
        raise OutputError(
            f"{out} contains the current directory, and render replaces the whole folder; render from outside it"
        )


def _lock_wait(value: float | None) -> float:
    if value is None:
        raw = os.environ.get(LOCK_WAIT_ENV, "").strip()
        if not raw:
            return LOCK_WAIT_SECONDS
        try:
            value = float(raw)
        except ValueError:
            raise OutputError(f"{LOCK_WAIT_ENV}={raw!r} is not a number of seconds") from None
    if math.isnan(value) or value < 0:
        raise OutputError(f"the lock wait must be 0 seconds or more, not {value}")
    return value


def _why(exc: OSError) -> str:
    text = exc.strerror or str(exc)
    if exc.filename:
        text += f": {exc.filename}"
    if exc.errno in (errno.EXDEV, errno.EBUSY):
        text += " (is the output folder a mount point? Render into a folder inside it)"
    return text


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _is_regular(path: Path) -> bool:
    """A regular file, not a link: never open a FIFO (it would block) or a device."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def generated_files(root: Path, *, max_bytes: int | None = None) -> dict[str, str]:
    """Relative path -> text of every file under ``root`` that carries our header.

    Links, FIFOs and devices are never opened, hidden folders (``.git``) are not walked, and files over
    ``max_bytes`` are skipped unread.
    """
    found: dict[str, str] = {}
    for directory, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            path = Path(directory) / name
            if not name.endswith(".yaml") or not _is_regular(path):
                continue
            try:
                if max_bytes is not None and path.stat().st_size > max_bytes:
                    continue
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if is_generated(text):
                found[path.relative_to(root).as_posix()] = text
    return found


def _raise(exc: OSError) -> None:
    raise exc


def _flush_tree(root: Path) -> None:
    """Make the staging tree durable before the swap: one ``syncfs``, else an fsync of each file and folder."""
    if not _syncfs(root):
        _sync_tree(root)


@functools.cache
def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _syncfs(path: Path) -> bool:
    """Flush the whole file system that holds ``path`` (Linux); False where there is no ``syncfs``."""
    function = getattr(_libc(), "syncfs", None)
    if function is None:
        return False
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if function(fd) == 0:
            return True
        error = ctypes.get_errno()
    finally:
        os.close(fd)
    if error == errno.ENOSYS:
        return False
    raise OSError(error, os.strerror(error), str(path))  # a write-back error: the tree may not be on disk


def _sync_tree(root: Path) -> None:
    """Fsync every file and folder of the staging tree, so that the swap publishes whole files."""
    for directory, _, filenames in os.walk(root, topdown=False, followlinks=False, onerror=_raise):
        for name in filenames:
            path = Path(directory) / name
            if _is_regular(path):
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        _fsync_folder(Path(directory))


def _fsync_folder(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    except OSError as exc:  # some file systems cannot sync a folder; the files themselves are synced
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def _test_pause() -> None:
    """Test hook: sleep before the swap, so that a test can kill or race a render part-way."""
    raw = os.environ.get(_PAUSE_ENV)
    if not raw:
        return
    try:
        deadline = time.monotonic() + float(raw)
    except ValueError:
        return
    resume = os.environ.get(_RESUME_ENV)
    while (left := deadline - time.monotonic()) > 0:
        if resume and os.path.exists(resume):
            return
        time.sleep(min(left, 0.05))


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(staging: Path, out: Path) -> None:
    """Swap ``staging`` into place: one atomic renameat2 exchange where the kernel has it."""
    if not out.exists():
        os.rename(staging, out)
        return
    if _renameat2(staging, out):
        return
    backup = out.with_name(f".{out.name}.gpustack-gen.old")
    os.rename(out, backup)
    os.rename(staging, out)
    os.rename(backup, staging)


def _exchange_inside(staging: Path, out: Path, folder: str) -> bool:
    """Swap ``staging`` with ``out/folder`` and flush the folder that holds it; False where it cannot be.

    The folders on the way are opened one by one without following a link, so that a link put in the
    way meanwhile cannot send the folder, or the removal of the previous one, outside ``out``.
    """
    holder = os.open(out, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        for part in folder.split("/")[:-1]:
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=holder)
            os.close(holder)
            holder = inner
        if not _renameat2(staging, Path(folder.rsplit("/", 1)[-1]), target_folder=holder):
            return False
        os.fsync(holder)
        return True
    finally:
        os.close(holder)


def _renameat2(a: Path, b: Path, *, target_folder: int = _AT_FDCWD) -> bool:
    """Exchange ``a`` and ``b`` (relative to the open folder ``target_folder`` if given) atomically."""
    function = getattr(_libc(), "renameat2", None)
    if function is None:
        return False
    result = function(_AT_FDCWD, os.fsencode(a), target_folder, os.fsencode(b), _RENAME_EXCHANGE)
    if result == 0:
        return True
    error = ctypes.get_errno()
    if error in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(error, os.strerror(error), str(b))


def _recover(out: Path) -> None:
    """Finish a swap that a kill interrupted, and remove staging folders that a kill left behind."""
    backup = out.with_name(f".{out.name}.gpustack-gen.old")
    if backup.is_dir() and not backup.is_symlink():
        if not out.exists() and not out.is_symlink():
            os.rename(backup, out)  # killed between the two renames of the fallback swap
        else:
            shutil.rmtree(backup)
    # Exactly our staging names (mkdtemp adds 8 characters), not another folder's that starts alike.
    staging_name = re.compile(re.escape(f".{out.name}{_STAGING_INFIX}") + r"[a-z0-9_]{8}")
    for leftover in out.parent.iterdir():
        if staging_name.fullmatch(leftover.name) and leftover.is_dir() and not leftover.is_symlink():
            shutil.rmtree(leftover)


@contextlib.contextmanager
def _lock(lock_path: Path, out: Path, wait: float, on_wait: Callable[[], None] | None) -> Iterator[None]:
    """Hold an exclusive flock on ``lock_path`` beside the output folder; remove the file afterwards.

    The file is removed on release (so that it does not end up in a GitOps commit); a render that
    locked a file removed meanwhile notices it (the inode changed) and locks the new one.
    """
    import fcntl

    deadline = time.monotonic() + wait
    told = False
    while True:
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise OutputError(f"cannot create the lock file {lock_path}: {_why(exc)}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            if time.monotonic() >= deadline:
                raise OutputError(
                    f"another gpustack-gen render is writing {out} (it holds {lock_path}); "
                    f"gave up after waiting {wait:g} s: try again when it has finished"
                ) from None
            if not told and on_wait is not None:
                on_wait()
                told = True
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
            continue
        except OSError as exc:
            os.close(fd)
            raise OutputError(f"cannot lock {lock_path}: {_why(exc)}") from None
        if _same_file(fd, lock_path):
            break
        os.close(fd)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock_path)
        os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = os.lstat(path)
    except OSError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (on_disk.st_dev, on_disk.st_ino)
