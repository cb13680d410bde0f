"""Bundle.write and Bundle.drift: atomic, confined, locked writes that keep what is not ours."""

from __future__ import annotations

import errno
import fcntl
import inspect
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpustack_gen import load_fleet, render
from gpustack_gen.emit import GENERATED_MARKER, Bundle, RenderedFile
from gpustack_gen.emit import bundle as bundle_module
from gpustack_gen.errors import OutputError

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "fleet.yaml"
HEADER = GENERATED_MARKER + "\n"


@pytest.fixture(scope="module")
def example() -> Bundle:
    return render(load_fleet(EXAMPLE))


def snapshot(root: Path) -> dict[str, tuple[str, int, bytes | str]]:
    """Every entry under ``root``: kind, mode and bytes (or link target). Links are not followed."""
    found: dict[str, tuple[str, int, bytes | str]] = {}
    for directory, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(directory) / name
            info = path.lstat()
            rel = path.relative_to(root).as_posix()
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", 0, os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                found[rel] = ("dir", stat.S_IMODE(info.st_mode), b"")
            else:
                found[rel] = ("file", stat.S_IMODE(info.st_mode), path.read_bytes())
    return found


def texts(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8", errors="surrogateescape")
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def contents(bundle: Bundle) -> dict[str, str]:
    return {rel: rendered.text for rel, rendered in bundle.items()}


def bundle_of(files: dict[str, str], scope: tuple[str, ...] | None = None) -> Bundle:
    return Bundle({rel: RenderedFile(rel, "test", text, ({},)) for rel, text in files.items()}, scope)


def edited(bundle: Bundle, every: bool = False) -> Bundle:
    """``bundle`` with its first file (or every file) changed: a write that must build a staging tree."""
    first = next(iter(bundle))
    return bundle_of(
        {rel: f.text + "# edited\n" if every or rel == first else f.text for rel, f in bundle.items()}, bundle.scope
    )


def staging_folders(parent: Path, name: str) -> list[Path]:
    return sorted(parent.glob(f".{name}.gpustack-gen.new-*"))


# --- the bundle as a mapping ---------------------------------------------------------------------------


def test_a_bundle_is_a_read_only_mapping_of_relative_paths(example: Bundle) -> None:
    assert isinstance(example, Mapping)
    assert "prod/gpu-operator-values.yaml" in example
    assert "prod/no-such-file.yaml" not in example
    assert example.get("prod/no-such-file.yaml") is None
    assert len(example) == len(example.keys()) == len(list(example)) > 0
    assert sorted(example) == sorted(example.keys())  # paths, not RenderedFile objects
    assert all(rel == rendered.path for rel, rendered in example.items())
    assert list(example.values()) == [example[rel] for rel in example]
    assert example.files == dict(example.items())
    with pytest.raises(KeyError):
        example["prod/no-such-file.yaml"]
    with pytest.raises(TypeError):
        example["prod/new.yaml"] = example["prod/capacity.yaml"]  # type: ignore[index]
    with pytest.raises(TypeError):
        example.files["prod/new.yaml"] = example["prod/capacity.yaml"]  # type: ignore[index]


def test_a_bundle_keeps_its_own_copy_and_refuses_a_path_that_does_not_match() -> None:
    files = {"c/a.yaml": RenderedFile("c/a.yaml", "test", HEADER, ())}
    bundle = Bundle(files)
    files["c/b.yaml"] = RenderedFile("c/b.yaml", "test", HEADER, ())
    assert list(bundle) == ["c/a.yaml"]
    assert bundle == Bundle({"c/a.yaml": RenderedFile("c/a.yaml", "test", HEADER, ())})
    assert bundle != Bundle(bundle.files, scope=("c",))
    with pytest.raises(ValueError, match=r"'c/b\.yaml' holds the file of 'c/a\.yaml'"):
        Bundle({"c/b.yaml": RenderedFile("c/a.yaml", "test", HEADER, ())})


# --- writing into an empty and into an existing folder -------------------------------------------------


def test_write_into_a_new_folder_writes_every_file_and_leaves_nothing_beside_it(
    tmp_path: Path, example: Bundle
) -> None:
    out = tmp_path / "nested" / "out"
    summary = bundle_module.Bundle.write(example, out)
    assert texts(out) == contents(example)
    assert set(summary.written) == set(example)
    assert summary.unchanged == () and summary.removed == ()
    assert sorted(p.name for p in out.parent.iterdir()) == ["out"]  # no lock file, no staging folder
    assert stat.S_IMODE(out.stat().st_mode) == 0o777 & ~bundle_module._umask()


def test_rewriting_an_unchanged_bundle_reports_every_file_unchanged(tmp_path: Path, example: Bundle) -> None:
    out = tmp_path / "out"
    example.write(out)
    summary = example.write(out)
    assert summary.written == () and summary.removed == ()
    assert set(summary.unchanged) == set(example)


def test_existing_folder_keeps_user_files_and_loses_stale_generated_ones(tmp_path: Path, example: Bundle) -> None:
    out = tmp_path / "out"
    example.write(out)
    user = {
        "README.md": "# our GitOps repo\n",
        "prod/notes.yaml": "# written by a person\nkeep: me\n",
        "prod/extra/notes.txt": "keep me too\n",
        ".git/config": "[core]\n",
        "prod/not-utf8.yaml": "\udcff",  # replaced below by raw bytes
    }
    for rel, text in user.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text, encoding="utf-8", errors="surrogateescape")
    (out / "empty-by-choice").mkdir()
    (out / "prod" / "old-file.yaml").write_text(HEADER + "stale: true\n")
    (out / "gone" / "workloads").mkdir(parents=True)
    (out / "gone" / "capacity.yaml").write_text(HEADER + "stale: true\n")
    (out / "gone" / "workloads" / "ml.api.yaml").write_text(HEADER + "stale: true\n")
    before = snapshot(out)

    summary = example.write(out)

    after = snapshot(out)
    for rel in [*user, "prod/extra", ".git", "empty-by-choice"]:
        assert after[rel] == before[rel], rel
    assert summary.removed == ("gone/capacity.yaml", "gone/workloads/ml.api.yaml", "prod/old-file.yaml")
    assert not (out / "prod" / "old-file.yaml").exists()
    assert not (out / "gone").exists()  # a folder only the pruning emptied goes too
    assert {rel: text for rel, text in texts(out).items() if rel in example} == contents(example)


def test_cluster_scope_prunes_only_the_rendered_clusters(tmp_path: Path, example: Bundle) -> None:
    out = tmp_path / "out"
    example.write(out)
    (out / "prod" / "old.yaml").write_text(HEADER + "stale: true\n")
    (out / "stage" / "old.yaml").write_text(HEADER + "stale: true\n")
    (out / "other-cluster").mkdir()
    (out / "other-cluster" / "capacity.yaml").write_text(HEADER + "other: true\n")
    stage_before = {rel: v for rel, v in snapshot(out).items() if not rel.startswith(("prod", "train"))}

    only_prod = render(load_fleet(EXAMPLE), ["prod"])
    assert only_prod.scope == ("prod",)
    assert only_prod.drift(out).stale == ("prod/old.yaml",)
    summary = only_prod.write(out)

    assert summary.removed == ("prod/old.yaml",)
    after = snapshot(out)
    assert {rel: v for rel, v in after.items() if not rel.startswith(("prod", "train"))} == stage_before
    assert (out / "stage" / "old.yaml").exists()
    assert (out / "other-cluster" / "capacity.yaml").exists()


def test_the_folder_and_its_subfolders_keep_their_permissions(tmp_path: Path, example: Bundle) -> None:
    out = tmp_path / "out"
    example.write(out)
    (out / "mine").mkdir()
    os.chmod(out / "mine", 0o700)
    os.chmod(out / "prod", 0o750)
    os.chmod(out, 0o2751)
    edited(example).write(out)
    assert stat.S_IMODE(out.stat().st_mode) == 0o2751
    assert stat.S_IMODE((out / "prod").stat().st_mode) == 0o750
    assert stat.S_IMODE((out / "mine").stat().st_mode) == 0o700


def test_a_read_only_output_folder_keeps_its_mode_and_still_gets_written(tmp_path: Path, example: Bundle) -> None:
    out = tmp_path / "out"
    example.write(out)
    os.chmod(out / "prod", 0o555)
    os.chmod(out, 0o555)
    try:
        bundle_of({**contents(example), "prod/new.yaml": HEADER + "new: 1\n"}).write(out)
        assert (out / "prod" / "new.yaml").read_text() == HEADER + "new: 1\n"
        assert stat.S_IMODE(out.stat().st_mode) == 0o555
        assert stat.S_IMODE((out / "prod").stat().st_mode) == 0o555
    finally:
        os.chmod(out, 0o755)
        os.chmod(out / "prod", 0o755)


def test_relative_and_dot_output_folders(tmp_path: Path, example: Bundle, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    example.write("rendered/")
    assert texts(tmp_path / "rendered") == contents(example)
    (tmp_path / "rendered" / "keep.txt").write_text("mine\n")
    monkeypatch.chdir(tmp_path / "rendered")
    with pytest.raises(OutputError, match="contains the current directory"):
        example.write(".")  # the swap would leave this shell in a deleted directory
    monkeypatch.chdir(tmp_path)
    summary = example.write("rendered/../rendered")
    assert set(summary.unchanged) == set(example)
    assert (tmp_path / "rendered" / "keep.txt").read_text() == "mine\n"
    with pytest.raises(OutputError, match="folder of their own"):
        example.write("/")


def test_the_fallback_swap_without_renameat2_gives_the_same_result(
    tmp_path: Path, example: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bundle_module, "_renameat2", lambda *args, **kwargs: False)
    out = tmp_path / "out"
    example.write(out)
    (out / "keep.txt").write_text("mine\n")
    edited(example).write(out)
    assert {rel: t for rel, t in texts(out).items() if rel != "keep.txt"} == contents(edited(example))
    assert (out / "keep.txt").read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_swap_killed_between_the_fallback_renames_is_finished_by_the_next_write(
    tmp_path: Path, example: Bundle
) -> None:
    out = tmp_path / "out"
    example.write(out)
    os.rename(out, tmp_path / ".out.gpustack-gen.old")  # killed after the first of the three renames
    leftover = tmp_path / ".out.gpustack-gen.new-abcd1234"
    leftover.mkdir()
    not_ours = tmp_path / ".out.gpustack-gen.new-x.gpustack-gen.new-abcd1234"  # another output's staging
    not_ours.mkdir()
    summary = example.write(out)
    assert set(summary.unchanged) == set(example)  # the previous output was put back first
    assert not (tmp_path / ".out.gpustack-gen.old").exists()
    assert not leftover.exists()
    assert not_ours.exists()


# --- the cost follows the change -----------------------------------------------------------------------


def identities(root: Path) -> dict[str, tuple[int, int, int]]:
    """Inode, mode and modification time of the folder and of everything under it (links not followed)."""
    found = {".": (root.lstat().st_ino, root.lstat().st_mode, root.lstat().st_mtime_ns)}
    for path in root.rglob("*"):
        info = path.lstat()
        found[path.relative_to(root).as_posix()] = (info.st_ino, info.st_mode, info.st_mtime_ns)
    return found


@pytest.fixture
def out(tmp_path: Path, example: Bundle) -> Path:
    """The example rendered into ``tmp_path/out``, with a file of the user's beside the clusters."""
    folder = tmp_path / "out"
    example.write(folder)
    (folder / "keep.txt").write_text("mine\n")
    return folder


def test_an_unchanged_render_touches_nothing(
    tmp_path: Path, out: Path, example: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = identities(out)

    def no_staging(*args: object, **kwargs: object) -> str:
        raise AssertionError("an unchanged render built a staging folder")

    monkeypatch.setattr(tempfile, "mkdtemp", no_staging)
    summary = example.write(out)
    assert set(summary.unchanged) == set(example) and summary.written == summary.removed == ()
    assert identities(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_change_writes_only_the_changed_file_and_swaps_only_its_cluster(
    tmp_path: Path, out: Path, example: Bundle
) -> None:
    (out / "prod" / "notes.md").write_text("mine too\n")
    before = identities(out)
    changed = edited(example)
    (first,) = [rel for rel in example if example[rel].text != changed[rel].text]
    assert first.startswith("prod/")

    summary = changed.write(out)

    assert summary.written == (first,)
    assert (out / first).read_text() == changed[first].text
    after = identities(out)
    assert after[first][0] != before[first][0]  # a new file
    for rel, (inode, mode, _) in before.items():
        if rel.startswith("prod/") and rel != first and not stat.S_ISDIR(mode):
            assert after[rel][:2] == (inode, mode), rel  # the same file, linked into the new folder
        elif not rel.startswith("prod") and rel != ".":
            assert after[rel] == before[rel], rel  # other clusters' folders are not even rebuilt
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_changes_in_several_clusters_swap_the_whole_folder_and_link_what_stays(out: Path, example: Bundle) -> None:
    before = identities(out)
    changed = bundle_of(
        {rel: f.text + "# edited\n" if rel.endswith("capacity.yaml") else f.text for rel, f in example.items()}
    )
    summary = changed.write(out)
    assert sorted(summary.written) == ["prod/capacity.yaml", "stage/capacity.yaml", "train/capacity.yaml"]
    assert texts(out) == {**contents(changed), "keep.txt": "mine\n"}
    after = identities(out)
    assert after["."][0] != before["."][0]  # a new output folder
    for rel, (inode, _, _) in before.items():
        if not rel.endswith(("capacity.yaml", "/")) and not stat.S_ISDIR(before[rel][1]) and rel != ".":
            assert after[rel][0] == inode, rel


def test_a_pruned_subfolder_swaps_only_its_cluster(tmp_path: Path, example: Bundle) -> None:
    out = tmp_path / "out"
    example.write(out)
    (out / "prod" / "old" / "deeper").mkdir(parents=True)
    (out / "prod" / "old" / "deeper" / "gone.yaml").write_text(HEADER + "stale: true\n")
    (out / "prod" / "old" / "gone.yaml").write_text(HEADER + "stale: true\n")
    (out / "prod" / "kept").mkdir()
    (out / "prod" / "kept" / "gone.yaml").write_text(HEADER + "stale: true\n")
    (out / "prod" / "kept" / "mine.txt").write_text("mine\n")
    before = identities(out)
    summary = example.write(out)
    assert summary.removed == ("prod/kept/gone.yaml", "prod/old/deeper/gone.yaml", "prod/old/gone.yaml")
    assert not (out / "prod" / "old").exists()
    assert (out / "prod" / "kept" / "mine.txt").read_text() == "mine\n"
    assert identities(out)["stage"] == before["stage"]
    assert example.drift(out).clean


def test_a_file_that_differs_only_in_line_endings_is_rewritten(tmp_path: Path, example: Bundle) -> None:
    out = tmp_path / "out"
    example.write(out)
    path = out / "prod" / "capacity.yaml"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert example.drift(out).changed == ("prod/capacity.yaml",)
    assert example.write(out).written == ("prod/capacity.yaml",)
    assert path.read_bytes() == example["prod/capacity.yaml"].text.encode()


def test_a_generated_file_in_a_hidden_folder_is_never_pruned(tmp_path: Path, example: Bundle) -> None:
    out = tmp_path / "out"
    example.write(out)
    (out / ".history" / "prod").mkdir(parents=True)
    (out / ".history" / "prod" / "capacity.yaml").write_text(HEADER + "old: true\n")
    assert example.drift(out).clean
    edited(example).write(out)
    assert (out / ".history" / "prod" / "capacity.yaml").read_text() == HEADER + "old: true\n"


def _counting(monkeypatch: pytest.MonkeyPatch, owner: object, name: str, calls: list[str]) -> None:
    real = getattr(owner, name)

    def counted(*args: Any) -> Any:
        calls.append(name)
        return real(*args)

    monkeypatch.setattr(owner, name, counted)


@pytest.mark.parametrize("every", [False, True], ids=["one cluster", "every file"])
def test_one_durability_barrier_per_render(
    out: Path, example: Bundle, monkeypatch: pytest.MonkeyPatch, every: bool
) -> None:
    if not bundle_module._syncfs(out):
        pytest.skip("no syncfs on this platform")
    calls: list[str] = []
    _counting(monkeypatch, bundle_module, "_syncfs", calls)
    _counting(monkeypatch, os, "fsync", calls)
    edited(example, every=every).write(out)
    assert calls == ["_syncfs", "fsync"]  # the staging tree, then the folder that holds the swapped one


def test_without_syncfs_every_staged_file_and_folder_is_fsynced(
    out: Path, example: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bundle_module, "_syncfs", lambda path: False)
    calls: list[str] = []
    _counting(monkeypatch, os, "fsync", calls)
    changed = edited(example, every=True)
    changed.write(out)
    assert texts(out) == {**contents(changed), "keep.txt": "mine\n"}
    assert len(calls) == len(list(out.rglob("*"))) + 1 + 1  # every file and folder, the folder itself, its parent


def test_where_hard_links_are_refused_the_kept_files_are_copied(
    out: Path, example: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    os.chmod(out / "keep.txt", 0o640)
    (out / "prod" / "link.md").symlink_to("../keep.txt")
    before = snapshot(out)

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(os, "link", refuse)
    changed = edited(example, every=True)
    changed.write(out)
    after = snapshot(out)
    for rel in ("keep.txt", "prod/link.md"):
        assert after[rel] == before[rel], rel
    assert texts(out) == {**contents(changed), "keep.txt": "mine\n"}


# A fleet's folder: clusters "c0".."c5", each with generated files directly in it and in "workloads/".
_TREE_PATH = st.builds(
    lambda cluster, sub, name: f"c{cluster}/{sub}{name}.yaml",
    st.integers(0, 5),
    st.sampled_from(["", "workloads/", "workloads/more/"]),
    st.sampled_from("abcd"),
)
_TREE_PATHS = st.sets(_TREE_PATH, max_size=14)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    old=_TREE_PATHS,
    data=st.data(),
    user=st.sets(st.sampled_from(["c0/notes.md", "c1/workloads/notes.md", "top.md", ".git/x.yaml"])),
    scoped=st.booleans(),
)
def test_any_change_gives_the_new_tree_and_keeps_the_rest(
    old: set[str], data: st.DataObject, user: set[str], scoped: bool
) -> None:
    """Whatever changes, the folder ends up as the bundle says, with what is not ours and nothing else."""
    # Often a few changes, in one cluster: the swap of one cluster's folder is exercised too.
    dropped = data.draw(st.sets(st.sampled_from(sorted(old)), max_size=2)) if old else set()
    new = (old - dropped) | data.draw(_TREE_PATHS if data.draw(st.booleans()) else st.sets(_TREE_PATH, max_size=2))
    edits = data.draw(st.sets(st.sampled_from(sorted(new)), max_size=2)) if new else set()
    old_files = {rel: f"{HEADER}old: {rel}\n" for rel in sorted(old)}
    new_files = {rel: f"{HEADER}{'new' if rel in edits else 'old'}: {rel}\n" for rel in sorted(new)}
    scope = tuple(sorted({rel.split("/")[0] for rel in new} | {"c0"})) if scoped else None
    user_files = {rel: f"{HEADER}mine: {rel}\n" if rel.endswith(".yaml") else "mine\n" for rel in user}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        bundle_of(old_files).write(out)
        for rel, text in user_files.items():
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_text(text)
        bundle = bundle_of(new_files, scope)
        summary = bundle.write(out)
        kept = {rel: t for rel, t in old_files.items() if scope is not None and rel.split("/")[0] not in scope}
        expected = {**kept, **new_files, **user_files}
        assert texts(out) == expected
        assert set(summary.removed) == set(old_files) - set(new_files) - set(kept)
        assert set(summary.written) == {rel for rel, t in new_files.items() if old_files.get(rel) != t}
        folders = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_dir()}
        assert folders == {parent.as_posix() for rel in expected for parent in PurePosixPath(rel).parents} - {"."}
        assert bundle.drift(out).clean
        assert sorted(p.name for p in Path(tmp).iterdir()) == ["out"]


# --- drift (render --check) ----------------------------------------------------------------------------


def test_drift_reports_missing_changed_and_stale(tmp_path: Path, example: Bundle) -> None:
    out = tmp_path / "out"
    assert example.drift(out).missing == tuple(example)
    example.write(out)
    assert example.drift(out).clean
    (out / "prod" / "capacity.yaml").write_text(HEADER + "edited: true\n")
    (out / "stage" / "node-labels.yaml").unlink()
    (out / "stage" / "node-labels.yaml").write_text("# hand-written, no header\n")
    (out / "train" / "kustomization.yaml").unlink()
    (out / "prod" / "stale.yaml").write_text(HEADER + "stale: true\n")
    (out / "prod" / "hand-written.yaml").write_text("mine: true\n")
    drift = example.drift(out)
    assert drift.missing == ("train/kustomization.yaml",)
    assert drift.changed == ("prod/capacity.yaml", "stage/node-labels.yaml")
    assert drift.stale == ("prod/stale.yaml",)
    assert not drift.clean


def test_drift_and_write_do_not_hang_on_a_fifo(tmp_path: Path, example: Bundle) -> None:
    out = tmp_path / "out"
    example.write(out)
    os.mkfifo(out / "prod" / "pipe.yaml")
    assert example.drift(out).clean
    summary = edited(example).write(out)  # the pipe is linked into the new tree, never opened
    assert len(summary.written) == 1
    assert stat.S_ISFIFO((out / "prod" / "pipe.yaml").lstat().st_mode)
    assert staging_folders(tmp_path, "out") == []


# --- confinement ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rel",
    [
        "../x.yaml",
        "/abs.yaml",
        "a/../../b.yaml",
        "a/../b.yaml",
        "",
        ".",
        "./a.yaml",
        "a//b.yaml",
        "a\\b.yaml",
        "a\0.yaml",
    ],
)
def test_paths_that_could_leave_the_output_folder_are_refused(tmp_path: Path, rel: str) -> None:
    out = tmp_path / "box" / "out"
    with pytest.raises(OutputError, match="not a plain relative path"):
        bundle_of({"ok/file.yaml": HEADER, rel: HEADER}).write(out)
    assert list(tmp_path.iterdir()) == []  # nothing at all was created, not even the parent


def test_a_symlinked_cluster_folder_is_not_followed(tmp_path: Path, example: Bundle) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "capacity.yaml").write_text("precious\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "prod").symlink_to(elsewhere)
    before, outside = snapshot(out), snapshot(elsewhere)
    with pytest.raises(OutputError, match="symbolic link"):
        example.write(out)
    assert snapshot(elsewhere) == outside
    assert snapshot(out) == before
    assert staging_folders(tmp_path, "out") == []


def test_a_symlinked_file_is_not_written_through(tmp_path: Path, example: Bundle) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "target.txt"
    target.write_text("precious\n")
    out = tmp_path / "out"
    example.write(out)
    (out / "prod" / "capacity.yaml").unlink()
    (out / "prod" / "capacity.yaml").symlink_to(target)
    before = snapshot(out)
    with pytest.raises(OutputError, match="symbolic link"):
        example.write(out)
    assert target.read_text() == "precious\n"
    assert sorted(p.name for p in elsewhere.iterdir()) == ["target.txt"]
    assert snapshot(out) == before


def test_a_symlink_the_bundle_does_not_touch_is_kept_as_a_link(tmp_path: Path, example: Bundle) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.yaml").write_text(HEADER + "not: ours to prune\n")
    out = tmp_path / "out"
    example.write(out)
    (out / "shared").symlink_to(elsewhere)
    (out / "prod" / "link.yaml").symlink_to(elsewhere / "x.yaml")
    edited(example).write(out)
    assert os.readlink(out / "shared") == str(elsewhere)
    assert os.readlink(out / "prod" / "link.yaml") == str(elsewhere / "x.yaml")
    assert (elsewhere / "x.yaml").read_text() == HEADER + "not: ours to prune\n"


def test_a_link_put_in_the_way_before_the_swap_is_not_followed(
    tmp_path: Path, example: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    example.write(out)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "workloads").mkdir(parents=True)
    (elsewhere / "workloads" / "precious.txt").write_text("precious\n")
    outside = snapshot(elsewhere)
    workload = next(rel for rel in example if rel.startswith("prod/workloads/"))
    changed = bundle_of({rel: f.text + ("# edited\n" if rel == workload else "") for rel, f in example.items()})
    flush = bundle_module._flush_tree

    def flush_then_link(staging: Path) -> None:  # someone replaces prod/ with a link just before the swap
        flush(staging)
        os.rename(out / "prod", tmp_path / "prod-moved")
        (out / "prod").symlink_to(elsewhere)

    monkeypatch.setattr(bundle_module, "_flush_tree", flush_then_link)
    with pytest.raises(OutputError, match=r"cannot write .*out"):
        changed.write(out)
    assert snapshot(elsewhere) == outside
    assert staging_folders(tmp_path, "out") == []


def test_a_symlinked_output_folder_is_refused(tmp_path: Path, example: Bundle) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "out").symlink_to(elsewhere)
    with pytest.raises(OutputError, match="symbolic link"):
        example.write(tmp_path / "out")
    assert list(elsewhere.iterdir()) == []


def test_an_output_path_that_is_a_file_is_refused(tmp_path: Path, example: Bundle) -> None:
    (tmp_path / "out").write_text("a file\n")
    with pytest.raises(OutputError, match="not a folder"):
        example.write(tmp_path / "out")
    assert (tmp_path / "out").read_text() == "a file\n"


def test_a_hand_written_file_where_a_generated_one_belongs_is_not_overwritten(tmp_path: Path, example: Bundle) -> None:
    out = tmp_path / "out"
    example.write(out)
    (out / "prod" / "capacity.yaml").write_text("# my own capacity notes\n")
    before = snapshot(out)
    with pytest.raises(OutputError, match=r"refusing to overwrite .*capacity\.yaml"):
        example.write(out)
    assert snapshot(out) == before


# --- the lock ------------------------------------------------------------------------------------------


@pytest.fixture
def held_lock(tmp_path: Path) -> Iterator[Path]:
    lock = tmp_path / ".out.gpustack-gen.lock"
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield lock


def test_a_held_lock_gives_a_clear_error_and_changes_nothing(tmp_path: Path, example: Bundle, held_lock: Path) -> None:
    with pytest.raises(OutputError, match=r"another gpustack-gen render is writing .*out .*gave up after waiting 0 s"):
        example.write(tmp_path / "out", lock_wait=0)
    assert not (tmp_path / "out").exists()
    assert held_lock.exists()  # the holder's lock file is left alone


def test_the_lock_wait_comes_from_the_environment(
    tmp_path: Path, example: Bundle, held_lock: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(bundle_module.LOCK_WAIT_ENV, "0.3")
    waits: list[str] = []
    with pytest.raises(OutputError, match=r"gave up after waiting 0.3 s"):
        example.write(tmp_path / "out", on_wait=lambda: waits.append("waiting"))
    assert waits == ["waiting"]  # told once, not once per retry
    monkeypatch.setenv(bundle_module.LOCK_WAIT_ENV, "soon")
    with pytest.raises(OutputError, match="not a number of seconds"):
        example.write(tmp_path / "out")


# --- failures of the file system -----------------------------------------------------------------------


@pytest.mark.parametrize("code", [errno.EROFS, errno.ENOSPC, errno.EACCES])
def test_a_staging_folder_that_cannot_be_created_gives_an_output_error(
    tmp_path: Path, example: Bundle, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    out = tmp_path / "out"
    example.write(out)
    before = snapshot(out)

    def refuse(*args: object, **kwargs: object) -> str:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    with pytest.raises(OutputError, match=os.strerror(code)):
        edited(example).write(out)
    assert snapshot(out) == before


def test_a_full_disk_part_way_leaves_the_folder_as_it_was(
    tmp_path: Path, example: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    example.write(out)
    (out / "keep.txt").write_text("mine\n")
    before = snapshot(out)
    real_fdopen = os.fdopen
    opened: list[int] = []

    class FullDisk:
        def __init__(self, handle: object) -> None:
            self.handle = handle

        def __enter__(self) -> FullDisk:
            return self

        def __exit__(self, *exc: object) -> None:
            self.handle.close()  # type: ignore[attr-defined]

        def write(self, text: str) -> int:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def fdopen(fd: int, *args: object, **kwargs: object) -> object:
        opened.append(fd)
        handle = real_fdopen(fd, *args, **kwargs)  # type: ignore[call-overload]
        return handle if len(opened) < 3 else FullDisk(handle)  # the third file hits a full disk

    monkeypatch.setattr(os, "fdopen", fdopen)
    with pytest.raises(OutputError, match="No space left on device"):
        edited(render(load_fleet(EXAMPLE), ["prod"]), every=True).write(out)
    monkeypatch.undo()
    assert snapshot(out) == before
    assert staging_folders(tmp_path, "out") == []
    assert not (tmp_path / ".out.gpustack-gen.lock").exists()


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A real 1 MiB tmpfs, where the kernel allows mounting one (root in a privileged container)."""
    mount_point = tmp_path / "mnt"
    mount_point.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount_point)], capture_output=True, check=False
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def test_a_really_full_disk_gives_an_output_error(small_tmpfs: Path, example: Bundle) -> None:
    filler = small_tmpfs / "ballast"
    with filler.open("wb", buffering=0) as handle:
        with pytest.raises(OSError) as full:
            while True:
                handle.write(b"\0" * 4096)
        assert full.value.errno == errno.ENOSPC
    with pytest.raises(OutputError, match="No space left on device"):
        example.write(small_tmpfs / "out")
    assert not (small_tmpfs / "out").exists()
    assert staging_folders(small_tmpfs, "out") == []


def test_a_really_read_only_target_gives_an_output_error(small_tmpfs: Path, example: Bundle) -> None:
    out = small_tmpfs / "out"
    example.write(out)
    before = snapshot(out)
    subprocess.run(["mount", "-o", "remount,ro", str(small_tmpfs)], check=True)
    with pytest.raises(OutputError, match="Read-only file system"):
        example.write(out)
    assert snapshot(out) == before


# --- interrupted and concurrent renders (real processes) -----------------------------------------------


def _changed_fleet(tmp_path: Path) -> Path:
    text = EXAMPLE.read_text(encoding="utf-8")
    changed = text.replace("tesla-t4: {replicas: 5}", "tesla-t4: {replicas: 6}")
    assert changed != text
    path = tmp_path / "fleet-next.yaml"
    path.write_text(changed, encoding="utf-8")
    return path


def _start_render(fleet: Path, out: Path, log: Path, **env: str) -> subprocess.Popen[bytes]:
    full_env = {**os.environ, **env}
    with log.open("wb") as stderr:
        return subprocess.Popen(
            [sys.executable, "-m", "gpustack_gen", "render", str(fleet), "--out", str(out)],
            cwd=os.getcwd(),
            env=full_env,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )


def _wait_until(condition: object, process: subprocess.Popen[bytes], log: Path, what: str) -> None:
    """Poll ``condition`` (a callable); fail if the process ends first or nothing happens for 60 s."""
    deadline = time.monotonic() + 60
    while not condition():  # type: ignore[operator]
        if process.poll() is not None:
            pytest.fail(f"render ended (rc {process.returncode}) before {what}: {log.read_text()}")
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"timed out waiting for {what}: {log.read_text()}")
        time.sleep(0.05)


def _staging_complete(parent: Path, name: str, expected: Bundle) -> bool:
    for folder in staging_folders(parent, name):
        try:
            if all((folder / rel).read_text(encoding="utf-8") == text for rel, text in contents(expected).items()):
                return True
        except (OSError, UnicodeDecodeError):
            continue
    return False


def test_sigkill_before_the_swap_leaves_the_previous_output_intact(tmp_path: Path, example: Bundle) -> None:
    out = tmp_path / "out"
    example.write(out)
    (out / "keep.txt").write_text("mine\n")
    before = snapshot(out)
    fleet = _changed_fleet(tmp_path)
    expected = render(load_fleet(fleet))
    assert contents(expected) != contents(example)
    log = tmp_path / "render.log"

    process = _start_render(fleet, out, log, GPUSTACK_GEN_TEST_PAUSE_BEFORE_SWAP="60")
    try:
        _wait_until(lambda: _staging_complete(tmp_path, "out", expected), process, log, "the staging folder")
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL

    assert snapshot(out) == before  # byte for byte, modes included
    assert len(staging_folders(tmp_path, "out")) == 1  # the kill really happened part-way

    summary = expected.write(out)  # the next render cleans up the leftover staging folder
    assert staging_folders(tmp_path, "out") == []
    assert {rel: t for rel, t in texts(out).items() if rel != "keep.txt"} == contents(expected)
    assert (out / "keep.txt").read_text() == "mine\n"
    assert summary.written  # the changed files really changed


def test_two_renders_into_one_folder_do_not_interleave(tmp_path: Path, example: Bundle) -> None:
    out = tmp_path / "out"
    first_fleet = EXAMPLE
    second_fleet = _changed_fleet(tmp_path)
    first = render(load_fleet(first_fleet))
    second = render(load_fleet(second_fleet))
    resume = tmp_path / "resume"
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"

    a = _start_render(
        first_fleet,
        out,
        first_log,
        GPUSTACK_GEN_TEST_PAUSE_BEFORE_SWAP="120",
        GPUSTACK_GEN_TEST_RESUME_FILE=str(resume),
    )
    b: subprocess.Popen[bytes] | None = None
    try:
        _wait_until(lambda: _staging_complete(tmp_path, "out", first), a, first_log, "the first staging folder")
        b = _start_render(second_fleet, out, second_log, GPUSTACK_GEN_LOCK_WAIT="120")
        _wait_until(lambda: b is not None and "waiting for another" in second_log.read_text(), b, second_log, "b waits")
        assert not out.exists()  # the first render is still paused before its swap: nothing published
        assert b.poll() is None
        resume.write_text("go\n")
        a.communicate(timeout=120)
        b_out, _ = b.communicate(timeout=120)
    finally:
        for process in (a, b):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
    assert a.returncode == 0, first_log.read_text()
    assert b.returncode == 0, second_log.read_text()
    # The second render ran after the first had swapped in a complete folder, and then replaced it whole.
    same = sum(1 for rel, f in second.items() if rel in first and first[rel].text == f.text)
    assert f"{len(second) - same} written, {same} unchanged" in b_out.decode()
    assert texts(out) == contents(second)
    assert staging_folders(tmp_path, "out") == []
    assert not (tmp_path / ".out.gpustack-gen.lock").exists()


def test_refuses_the_folder_the_shell_stands_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder is swapped whole: a shell standing in it would be left in a deleted directory."""
    bundle = Bundle({"c/a.yaml": RenderedFile("c/a.yaml", "x", GENERATED_MARKER + "\n", ())})
    here = tmp_path / "here"
    (here / "sub").mkdir(parents=True)
    monkeypatch.chdir(here / "sub")
    with pytest.raises(OutputError, match="contains the current directory"):
        bundle.write(here)
    monkeypatch.chdir(tmp_path)
    bundle.write(here)
    assert (here / "c" / "a.yaml").is_file()


def large_bundle(version: str) -> Bundle:
    """720 files in 20 cluster folders; a third of them change with ``version``."""
    files = {}
    for cluster in range(20):
        for index in range(36):
            rel = f"c{cluster:02d}/workloads/w{index:03d}.yaml"
            text = f"{GENERATED_MARKER}\nfile: {rel}\n" + (f"version: {version}\n" if index % 3 == 0 else "")
            files[rel] = RenderedFile(rel, "test", text, ())
    return Bundle(files)


def _files_under(root: Path) -> int:
    return sum(len(filenames) for _, _, filenames in os.walk(root))


def test_sigkill_while_linking_and_writing_a_large_tree_leaves_the_previous_output_intact(tmp_path: Path) -> None:
    """The child stops itself part-way (after its tenth link, then after its tenth new file) and says so with a
    marker file; the kill lands there, whatever the machine's load, never after the swap."""
    out = tmp_path / "out"
    large_bundle("1").write(out)
    (out / "keep.txt").write_text("mine\n")
    (out / "c00" / "link.md").symlink_to("../keep.txt")
    before = snapshot(out)
    script = "\n".join(
        [
            "import sys, time",
            "from pathlib import Path",
            "from gpustack_gen.emit import GENERATED_MARKER, Bundle, RenderedFile",
            "from gpustack_gen.emit import bundle",
            inspect.getsource(large_bundle),
            "step, marker = sys.argv[2], Path(sys.argv[3])",
            "original, calls = getattr(bundle, step), []",
            "def paused(*args):",
            "    original(*args)",
            "    calls.append(1)",
            "    if len(calls) == 10:",
            "        marker.write_text('paused')",
            "        time.sleep(600)",
            "setattr(bundle, step, paused)",
            "large_bundle('2').write(sys.argv[1])",
        ]
    )
    total = len(large_bundle("2")) + 1  # and keep.txt: the new tree links two thirds of it, writes one third
    staged: list[int] = []
    for step in ("_link", "_write_new"):  # while it links, and while it writes
        seen = set(staging_folders(tmp_path, "out"))  # the previous attempt's leftover
        marker = tmp_path / f"paused{step}"
        log = tmp_path / f"kill{step}.log"
        with log.open("wb") as stderr:
            process = subprocess.Popen([sys.executable, "-c", script, str(out), step, str(marker)], stderr=stderr)
        try:
            _wait_until(marker.exists, process, log, f"the pause after ten calls of {step}")
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait()
        assert process.returncode == -signal.SIGKILL, log.read_text()
        assert snapshot(out) == before  # byte for byte, modes and links included
        (leftover,) = [f for f in staging_folders(tmp_path, "out") if f not in seen]
        staged.append(_files_under(leftover))
    assert max(staged) < total, staged  # both kills landed part-way through building the tree

    new = large_bundle("2")
    summary = new.write(out)  # the next render removes what the killed ones left
    assert staging_folders(tmp_path, "out") == []
    assert len(summary.written) == len(new) // 3
    assert texts(out) == {**contents(new), "keep.txt": "mine\n"}
