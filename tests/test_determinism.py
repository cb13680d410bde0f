"""The same intent gives the same bytes under another hash seed and another locale, in fresh processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "fleet.yaml"


def available_locales() -> list[str]:
    try:
        listed = subprocess.run(["locale", "-a"], capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        listed = []
    utf8 = [name for name in listed if name.lower().replace("-", "") in ("c.utf8", "en_us.utf8")]
    return [*utf8, "C", "POSIX"]


def render_in_subprocess(out: Path, hash_seed: str, locale: str) -> dict[str, bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONHASHSEED", "PYTHONUTF8"))}
    env.update({"PYTHONHASHSEED": hash_seed, "LC_ALL": locale, "LANG": locale, "TZ": "Pacific/Kiritimati"})
    done = subprocess.run(
        [sys.executable, "-m", "gpustack_gen", "render", "examples/fleet.yaml", "--out", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_render_is_byte_identical_across_hash_seeds_and_locales(tmp_path: Path) -> None:
    locales = available_locales()
    first_locale, second_locale = locales[0], locales[-1]
    assert first_locale != second_locale
    first = render_in_subprocess(tmp_path / "a", "0", first_locale)
    second = render_in_subprocess(tmp_path / "b", "4242", second_locale)
    third = render_in_subprocess(tmp_path / "c", "random", first_locale)
    assert first
    assert first == second == third


def test_the_committed_example_output_matches_a_fresh_render(tmp_path: Path) -> None:
    committed = REPO / "examples" / "rendered"
    fresh = render_in_subprocess(tmp_path / "out", "1", available_locales()[-1])
    assert fresh == {p.relative_to(committed).as_posix(): p.read_bytes() for p in committed.rglob("*") if p.is_file()}
