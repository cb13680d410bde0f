"""The hostile-input corpus (issue 5): every bad fleet gives its exact located errors and exit 2.

``bad/NN-name.yaml`` holds one mistake; ``bad/NN-name.expected`` holds every problem line the library
reports for it (``Problem.format()``), which is also exactly what ``gpustack-gen validate`` prints on stderr
before its one-line summary. ``good/`` holds fleets that look odd but must load: BOM, CRLF, anchors.
The oversized file is generated at run time; resource use is measured in a child process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpustack_gen.cli import main
from gpustack_gen.errors import FleetError, Severity
from gpustack_gen.model import load_fleet
from gpustack_gen.yamlio.limits import MAX_FLEET_BYTES

HERE = Path(__file__).resolve().parent
BAD = sorted((HERE / "bad").glob("*.yaml"))
GOOD = sorted((HERE / "good").glob("*.yaml"))
EXIT_INVALID = 2
PEAK_MEMORY_LIMIT = 200 * 1024 * 1024


def expected_lines(path: Path) -> list[str]:
    return path.with_suffix(".expected").read_text(encoding="utf-8").splitlines()


def test_corpus_size() -> None:
    assert len(BAD) >= 55
    assert all(path.with_suffix(".expected").is_file() for path in BAD)
    assert {p.stem for p in (HERE / "bad").glob("*.expected")} == {p.stem for p in BAD}


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.stem)
def test_library_reports_the_expected_problems(path: Path) -> None:
    with pytest.raises(FleetError) as caught:
        load_fleet(path, name=path.name)
    problems = caught.value.problems
    assert [p.format() for p in problems] == expected_lines(path)
    assert any(p.severity is Severity.ERROR for p in problems)
    for problem in caught.value.errors:
        assert problem.hint, f"an error without a hint: {problem.format()}"


def run_in_process(path: Path) -> tuple[int, str, str]:
    """``gpustack-gen validate`` on a bad file, with click's test runner (the command's own code, in-process)."""
    cwd = Path.cwd()
    os.chdir(path.parent)
    try:
        done = CliRunner().invoke(main, ["validate", path.name])
    finally:
        os.chdir(cwd)
    return done.exit_code, done.stdout, done.stderr


def run_as_a_process(path: Path) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "gpustack_gen", "validate", path.name],
        cwd=path.parent,
        capture_output=True,
        timeout=120,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )
    return done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8")


# Two files also go through a real process (the entry point, stdout/stderr encoding, the exit status);
# the rest run in-process, which tests the same command ~50x faster.
IN_A_PROCESS = {BAD[0].name, BAD[-1].name}


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.stem)
def test_cli_exits_2_with_the_expected_lines(path: Path) -> None:
    code, stdout, stderr = (run_as_a_process if path.name in IN_A_PROCESS else run_in_process)(path)
    lines = stderr.splitlines()
    assert code == EXIT_INVALID, stderr
    assert stdout == ""
    assert lines[:-1] == expected_lines(path)
    errors = sum(" warning: " not in line for line in expected_lines(path))
    assert lines[-1].startswith(f"{errors} error"), lines[-1]


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.stem)
def test_odd_but_valid_fleets_load(path: Path) -> None:
    fleet = load_fleet(path)
    assert fleet.clusters
    assert all(p.severity is Severity.WARNING for p in fleet.warnings)


def test_bom_and_crlf_load_the_same_fleet_as_plain_text() -> None:
    plain = load_fleet((HERE / "good" / "crlf.yaml").read_bytes().replace(b"\r\n", b"\n").decode(), name="x")
    for name in ("bom.yaml", "crlf.yaml", "bom-crlf.yaml"):
        assert load_fleet(HERE / "good" / name).clusters == plain.clusters


def big_file(directory: Path) -> Path:
    path = directory / "huge.yaml"
    with path.open("w") as out:
        out.write("apiVersion: gpustack-gen/v1alpha1\nkind: Fleet\nclusters:\n")
        line = "  - {name: c, kubernetes: '1.29.15', nodePools: [{name: p, gpu: tesla-t4, nodes: 1, nodeSelector: {pool: p}}]}\n"
        out.write(line * (20 * 1024 * 1024 // len(line)))
    return path


def test_a_20_mb_file_is_refused_by_its_size(tmp_path: Path) -> None:
    path = big_file(tmp_path)
    message = f"huge.yaml: larger than {MAX_FLEET_BYTES:,} bytes, the limit"
    with pytest.raises(FleetError) as caught:
        load_fleet(path)
    assert caught.value.problems[0].format().startswith(message)
    done = subprocess.run(
        [sys.executable, "-m", "gpustack_gen", "validate", path.name], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == EXIT_INVALID
    assert done.stdout == ""
    assert done.stderr.splitlines()[0].startswith(message)


MEASURE = textwrap.dedent(
    """
    import json, resource, sys, time, tracemalloc
    from pathlib import Path
    from gpustack_gen.errors import FleetError
    from gpustack_gen.model import load_fleet
    tracemalloc.start()
    start = time.perf_counter()
    try:
        load_fleet(Path(sys.argv[1]))
        refused = False
    except FleetError:
        refused = True
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    # VmHWM: this process's own peak; ru_maxrss keeps the peak of the process that forked it (an xdist worker)
    status = Path("/proc/self/status").read_text().splitlines()
    hwm = [int(line.split()[1]) for line in status if line.startswith("VmHWM:")]
    rss = (hwm[0] if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024  # kilobytes
    print(json.dumps({"refused": refused, "seconds": seconds, "peak": peak, "rss": rss}))
    """
)


@pytest.mark.parametrize("case", ["alias-bomb", "20mb"])
def test_hostile_files_are_refused_with_bounded_memory(case: str, tmp_path: Path) -> None:
    path = big_file(tmp_path) if case == "20mb" else HERE / "bad" / "40-alias-bomb.yaml"
    done = subprocess.run([sys.executable, "-c", MEASURE, str(path)], capture_output=True, text=True, check=True)
    figures = json.loads(done.stdout)
    # Time is reported, never asserted: CI machines vary.
    print(
        f"\n{case}: refused in {figures['seconds']:.3f} s, traced peak {figures['peak'] / 2**20:.1f} MiB, "
        f"max RSS {figures['rss'] / 2**20:.1f} MiB"
    )
    assert figures["refused"]
    assert figures["peak"] < PEAK_MEMORY_LIMIT
    assert figures["rss"] < PEAK_MEMORY_LIMIT
