"""A rendered bundle (relative path -> file text) and its atomic, confined write to disk."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import OutputError
from .header import is_generated

LOCK_WAIT_SECONDS = 30.0
_PAUSE_ENV = "GPUSTACK_GEN_TEST_PAUSE_BEFORE_SWAP"  # test hook: seconds to sleep before the swap


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
class Bundle:
    """Every file of a render, in a stable order; ``scope`` names the cluster folders it owns."""

    files: dict[str, RenderedFile]
    scope: tuple[str, ...] | None = None  # None: the whole output folder is ours to prune

    def __iter__(self) -> Iterator[RenderedFile]:
        return iter(self.files.values())

    def __getitem__(self, path: str) -> RenderedFile:
        return self.files[path]

    def write(self, out_dir: str | os.PathLike[str]) -> WriteSummary:
        """Write atomically: build the new folder beside ``out_dir``, then swap it in."""
        out = Path(out_dir)
        for rel in self.files:
            _check_relative(rel)
        parent = out.absolute().parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot create {parent}: {exc.strerror}") from None
        if out.is_symlink():
            raise OutputError(f"{out} is a symbolic link; refusing to write through it")
        if out.exists() and not out.is_dir():
            raise OutputError(f"{out} exists and is not a folder")
        with _lock(parent / f".{out.name}.gpustack-gen.lock", out):
            _recover(out)
            return self._swap_in(out, parent)

    def _swap_in(self, out: Path, parent: Path) -> WriteSummary:
        old_texts = _generated_files(out) if out.is_dir() else {}
        try:
            staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.gpustack-gen.new-", dir=parent))
        except OSError as exc:
            raise OutputError(f"cannot write beside {out}: {exc.strerror}") from None
        try:
            if out.is_dir():
                _copy_kept(out, staging, self._owned)
                os.chmod(staging, stat.S_IMODE(out.stat().st_mode))
            else:
                os.chmod(staging, 0o777 & ~_umask())
            for rendered in self:
                _write_confined(staging, rendered.path, rendered.text)
            pause = os.environ.get(_PAUSE_ENV)
            if pause:
                time.sleep(float(pause))
            _exchange(staging, out)
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise OutputError(f"cannot write {out}: {exc.strerror or exc}") from None
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
        out = Path(out_dir)
        existing = _generated_files(out) if out.is_dir() else {}
        missing, changed = [], []
        for rel, rendered in self.files.items():
            target = out / rel
            if rel in existing:
                if existing[rel] != rendered.text:
                    changed.append(rel)
            elif target.is_file():
                changed.append(rel)  # a hand-written file where a generated one belongs
            else:
                missing.append(rel)
        stale = sorted(p for p in existing if p not in self.files and self._owned(p))
        return Drift(tuple(missing), tuple(changed), tuple(stale))


def _check_relative(rel: str) -> None:
    path = PurePosixPath(rel)
    if path.is_absolute() or ".." in path.parts or not path.parts or "\\" in rel:
        raise OutputError(f"refusing to write {rel!r}: not a plain relative path")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _generated_files(root: Path) -> dict[str, str]:
    """Relative path -> text of every file under ``root`` that carries our header (symlinks skipped)."""
    found: dict[str, str] = {}
    for directory, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(directory) / name
            if path.is_symlink() or not name.endswith(".yaml"):
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if is_generated(text):
                found[path.relative_to(root).as_posix()] = text
    return found


def _copy_kept(source: Path, target: Path, owned: Any) -> None:
    """Copy what the render must keep: files that are not ours, and ours outside its scope."""
    for directory, dirnames, filenames in os.walk(source, followlinks=False):
        rel_dir = Path(directory).relative_to(source)
        (target / rel_dir).mkdir(exist_ok=True)
        for name in dirnames:
            if (Path(directory) / name).is_symlink():
                os.symlink(os.readlink(Path(directory) / name), target / rel_dir / name)
        for name in filenames:
            path = Path(directory) / name
            rel = (rel_dir / name).as_posix()
            if path.is_symlink():
                os.symlink(os.readlink(path), target / rel)
                continue
            if name.endswith(".yaml") and owned(rel) and _starts_generated(path):
                continue
            shutil.copy2(path, target / rel)


def _starts_generated(path: Path) -> bool:
    try:
        with path.open("r", encoding="utf-8") as handle:
            return is_generated(handle.read(64))
    except (OSError, UnicodeDecodeError):
        return False


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
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o666)
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


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
    raise OSError(error, os.strerror(error))


def _recover(out: Path) -> None:
    """Finish a swap that a kill interrupted between its two renames (fallback path only)."""
    backup = out.with_name(f".{out.name}.gpustack-gen.old")
    if backup.is_dir() and not out.exists():
        os.rename(backup, out)
    elif backup.is_dir():
        shutil.rmtree(backup, ignore_errors=True)
    for leftover in out.absolute().parent.glob(f".{out.name}.gpustack-gen.new-*"):
        shutil.rmtree(leftover, ignore_errors=True)


@contextlib.contextmanager
def _lock(lock_path: Path, out: Path) -> Iterator[None]:
    import fcntl

    try:
        handle = lock_path.open("a")
    except OSError as exc:
        raise OutputError(f"cannot create the lock file {lock_path}: {exc.strerror}") from None
    with handle:
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise OutputError(
                        f"another gpustack-gen render has been writing {out} for {LOCK_WAIT_SECONDS:.0f} s; "
                        "try again when it has finished"
                    ) from None
                time.sleep(0.1)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
