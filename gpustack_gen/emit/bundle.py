"""A rendered bundle (relative path -> RenderedFile) and its atomic, confined write to disk.

``Bundle.write(out)`` never changes ``out`` in place. Under a lock file beside it, it builds the new
folder in a private staging folder beside it (the files we do not own are copied over, our stale files
are left out), syncs it to disk, and swaps it in with one ``renameat2(RENAME_EXCHANGE)``: a reader, a
kill or a crash sees either the old folder or the new one, never a mix. Nothing is written through a
symbolic link or outside ``out``; a file without our header at a path we generate is never overwritten.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import math
import os
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
        old_texts = generated_files(out) if out.is_dir() else {}
        for rel in self.files:
            _check_target(out, rel, old_texts)
        try:
            staging = Path(tempfile.mkdtemp(prefix=f".{out.name}{_STAGING_INFIX}", dir=parent))
        except OSError as exc:
            raise OutputError(f"cannot write beside {out}: {_why(exc)}") from None
        try:
            if out.is_dir():
                emptied, modes = _copy_kept(out, staging, self._owned)
                modes.append((staging, stat.S_IMODE(out.stat().st_mode)))
            else:
                emptied, modes = set(), [(staging, 0o777 & ~_umask())]
            for rendered in self.files.values():
                _write_confined(staging, rendered.path, rendered.text)
            _remove_emptied(staging, emptied)
            # Modes last, deepest first: a read-only folder must not stop the render writing into it.
            for folder, mode in sorted(modes, key=lambda item: len(item[0].parts), reverse=True):
                if folder.is_dir():  # not one that the pruning emptied and removed
                    os.chmod(folder, mode)
            _sync_tree(staging)
            _test_pause()
            _exchange(staging, out)
            _fsync_folder(parent)
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise OutputError(f"cannot write {out}: {_why(exc)}") from None
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        shutil.rmtree(staging, ignore_errors=True)  # after the swap it holds the previous output
        written = tuple(p for p, f in self.files.items() if old_texts.get(p) != f.text)
        unchanged = tuple(p for p, f in self.files.items() if old_texts.get(p) == f.text)
        removed = tuple(sorted(p for p in old_texts if p not in self.files and self._owned(p)))
        return WriteSummary(written, unchanged, removed)

    def _owned(self, rel: str) -> bool:
        """Whether a generated file at ``rel`` belongs to this render (and is pruned when not in it)."""
        return self.scope is None or PurePosixPath(rel).parts[0] in self.scope

    def drift(self, out_dir: str | os.PathLike[str]) -> Drift:
        """What ``write`` would change: files missing, files that differ, generated files it would remove."""
        out = Path(os.path.abspath(os.fspath(out_dir)))
        existing = generated_files(out) if out.is_dir() else {}
        missing, changed = [], []
        for rel, rendered in self.files.items():
            if rel in existing:
                if existing[rel] != rendered.text:
                    changed.append(rel)
            elif os.path.lexists(out / rel):
                changed.append(rel)  # a hand-written file (or a link) where a generated one belongs
            else:
                missing.append(rel)
        stale = sorted(p for p in existing if p not in self.files and self._owned(p))
        return Drift(tuple(missing), tuple(changed), tuple(stale))


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


def _check_target(out: Path, rel: str, old_texts: dict[str, str]) -> None:
    """Refuse, before anything is written, a path that passes through a link or replaces a file not ours."""
    parts = PurePosixPath(rel).parts
    current = out
    for index, part in enumerate(parts):
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return
        except OSError as exc:
            raise OutputError(f"cannot write {current}: {_why(exc)}") from None
        if stat.S_ISLNK(mode):
            raise OutputError(f"{current} is a symbolic link in the output folder; refusing to follow it")
        if index < len(parts) - 1:
            if not stat.S_ISDIR(mode):
                raise OutputError(f"{current} is not a folder, but gpustack-gen writes {rel} inside it")
        elif stat.S_ISDIR(mode):
            raise OutputError(f"{current} is a folder where gpustack-gen writes a file")
        elif rel not in old_texts:
            raise OutputError(
                f"refusing to overwrite {current}: gpustack-gen did not write it (its first line is not "
                f"{GENERATED_MARKER!r}); move it away or delete it"
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


def _copy_kept(source: Path, target: Path, owned: Callable[[str], bool]) -> tuple[set[Path], list[tuple[Path, int]]]:
    """Copy what the render must keep: files that are not ours, and ours outside its scope.

    Returns the staging folders that lost a generated file (candidates for removal when empty) and the
    mode of every copied folder. An unreadable folder fails the render rather than being dropped.
    """
    emptied: set[Path] = set()
    modes: list[tuple[Path, int]] = []
    for directory, dirnames, filenames in os.walk(source, followlinks=False, onerror=_raise):
        here = Path(directory)
        rel_dir = here.relative_to(source)
        dest = target / rel_dir
        if rel_dir != Path("."):
            dest.mkdir()
            modes.append((dest, stat.S_IMODE(here.lstat().st_mode)))
        for name in dirnames:
            if (here / name).is_symlink():
                os.symlink(os.readlink(here / name), dest / name)
        for name in filenames:
            path = here / name
            if path.is_symlink():
                os.symlink(os.readlink(path), dest / name)
                continue
            rel = (rel_dir / name).as_posix()
            if name.endswith(".yaml") and owned(rel) and _starts_generated(path):
                emptied.add(dest)
                continue
            shutil.copy2(path, dest / name, follow_symlinks=False)
    return emptied, modes


def _starts_generated(path: Path) -> bool:
    if not _is_regular(path):
        return False
    try:
        with path.open("r", encoding="utf-8") as handle:
            return is_generated(handle.read(len(GENERATED_MARKER)))
    except (OSError, UnicodeDecodeError):
        return False


def _remove_emptied(root: Path, emptied: set[Path]) -> None:
    """Remove folders that only the pruning emptied (a cluster dropped from the fleet), never others."""
    for folder in sorted(emptied, key=lambda p: len(p.parts), reverse=True):
        current = folder
        while current != root and current.is_dir() and not any(current.iterdir()):
            current.rmdir()
            current = current.parent


def _write_confined(root: Path, rel: str, text: str) -> None:
    """Write ``root/rel`` without following any symbolic link, so nothing lands outside ``root``."""
    parts = PurePosixPath(rel).parts
    current = root
    for part in parts[:-1]:
        current = current / part
        if current.is_symlink():
            raise OutputError(f"{rel}: {part} is a symbolic link in the output folder; refusing to follow it")
        current.mkdir(exist_ok=True)
    target = current / parts[-1]
    if target.is_symlink():
        raise OutputError(f"{rel} is a symbolic link in the output folder; refusing to write through it")
    if not target.resolve().is_relative_to(root.resolve()):
        raise OutputError(f"{rel} resolves outside the output folder")
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


def _sync_tree(root: Path) -> None:
    """Flush every file and folder of the staging tree to disk, so that the swap publishes whole files."""
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


def _renameat2(a: Path, b: Path) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        function = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    result = function(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE)
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
