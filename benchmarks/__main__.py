"""``python -m benchmarks [--quick]``: run every figure, each in its own process, and print one table.

Columns: figure, measured, floor, ratio (measured / floor, or floor / measured for "x faster"
figures), goal, met?. The full run (1, 10, 100 and 1000 clusters; the write path at 100, 300 and 1000;
the whole commands at 100 and 1000) takes 10-15 minutes on 2 cores, most of it whole processes;
``--quick`` (1 and 10 clusters, the write path and the whole commands at 10, one repetition) takes
seconds and is what the smoke test runs. ``--code before=DIR`` measures the whole commands of another
source tree beside this one, in the same rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

GIB = 1024**3
MIB = 1024**2

Row = tuple[str, str, str, str, str, str]
HEADER: Row = ("figure", "measured", "floor", "ratio", "goal", "met?")


def _worker(args: list[str], timeout: float) -> dict[str, Any]:
    """Run ``python -m benchmarks.figures ARGS`` and return its JSON (or {"error": ...})."""
    command = [sys.executable, "-m", "benchmarks.figures", *args]
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    print(f"  running: {' '.join(args)}", file=sys.stderr, flush=True)
    try:
        done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"exit {done.returncode}: {last}"}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _s(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def _met(ok: bool) -> str:
    return "yes" if ok else "NO"


def _error_row(name: str, result: dict[str, Any]) -> Row | None:
    if "error" in result:
        return (name, f"error: {result['error']}", "-", "-", "-", "-")
    return None


def cold_rows(result: dict[str, Any]) -> list[Row]:
    error = _error_row("cold start", result)
    if error:
        return [error]
    wall, cpu = result["wall"], result["cpu"]
    floor = wall["floor"]

    def cell(name: str) -> str:
        return f"median {_s(wall[name]['median'])} (best {_s(wall[name]['best'])}, cpu {_s(cpu[name]['median'])})"

    rows = []
    for name, label, goal in (
        ("help", "--help", 1.3),
        ("validate", f"validate {result.get('example', 'example')}", 2.0),
    ):
        ratio = wall[name]["median"] / floor["median"]
        rows.append(
            (
                f"cold start: gpustack-gen {label}",
                cell(name),
                cell("floor"),
                f"{ratio:.2f}x",
                f"<= {goal}x",
                _met(ratio <= goal),
            )
        )
    if "model_floor" in wall:
        ratio = wall["validate"]["median"] / wall["model_floor"]["median"]
        rows.append(
            (
                "cold start: validate vs floor + one pydantic model (info)",
                cell("validate"),
                cell("model_floor"),
                f"{ratio:.2f}x",
                "-",
                "-",
            )
        )
    return rows


def render_rows(results: list[dict[str, Any]], big: int) -> list[Row]:
    rows: list[Row] = []
    ok = [r for r in results if "error" not in r]
    for result in results:
        error = _error_row(f"render {result.get('clusters', '?')} clusters", result)
        if error:
            rows.append(error)
            continue
        n = result["clusters"]
        render = result["render"]["wall"]["median"]
        floor = result["floor"]["wall"]["median"]
        ratio = result["render"]["cpu"]["median"] / result["floor"]["cpu"]["median"]
        goal, met = ("<= 2x", _met(ratio <= 2)) if n == big else ("-", "-")
        rows.append(
            (
                f"render {n} cluster{'s' if n != 1 else ''} ({result['documents']} docs, {result['reps']} rep{'s' if result['reps'] != 1 else ''})",
                f"render {_s(render)} (cpu {_s(result['render']['cpu']['median'])}, "
                f"{result['documents'] / render:.0f} docs/s; load {_s(result['load']['wall']['median'])})",
                f"dump_yaml {_s(floor)} (cpu {_s(result['floor']['cpu']['median'])})",
                f"{ratio:.2f}x",
                goal,
                met,
            )
        )
    emitters = [r for r in ok if "floor_ruamel" in r]
    if emitters:
        # The goal's floor is the emitter render uses (the fast writer, with ruamel for what it does not
        # take on); ruamel's emitter alone is shown beside it, and render against it.
        result = emitters[-1]
        n = result["clusters"]
        ruamel_cpu = result["floor_ruamel"]["cpu"]["median"]
        ours_cpu = result["floor"]["cpu"]["median"]
        rows.append(
            (
                f"emitter at {n} clusters: ruamel.yaml alone vs dump_yaml (info)",
                f"ruamel {_s(result['floor_ruamel']['wall']['median'])} (cpu {_s(ruamel_cpu)}); "
                f"render/ruamel {result['render']['cpu']['median'] / ruamel_cpu:.2f}x",
                f"dump_yaml {_s(result['floor']['wall']['median'])} (cpu {_s(ours_cpu)}); "
                f"ruamel for {result['fallbacks']} of {result['emitted']} documents",
                f"{ruamel_cpu / ours_cpu:.1f}x faster",
                "-",
                "-",
            )
        )
    if len(ok) >= 2:
        small, large = ok[-2], ok[-1]
        scale = large["clusters"] / small["clusters"]
        judged = (small["clusters"], large["clusters"]) == (big // 10, big)
        for phase in ("render", "load"):
            t_small, t_large = small[phase]["wall"]["median"], large[phase]["wall"]["median"]
            ratio = large[phase]["cpu"]["median"] / small[phase]["cpu"]["median"]
            rows.append(
                (
                    f"{phase} linearity t({large['clusters']})/t({small['clusters']})",
                    f"t({large['clusters']}) {_s(t_large)} (cpu {_s(large[phase]['cpu']['median'])})",
                    f"t({small['clusters']}) {_s(t_small)} (cpu {_s(small[phase]['cpu']['median'])})",
                    f"{ratio:.2f}",
                    f"<= {scale * 1.1:g}",
                    _met(ratio <= scale * 1.1) if judged else "- (goal at 1000/100)",
                )
            )
    if ok:
        large = ok[-1]
        peak = large["peak_rss_bytes"]
        judged = large["clusters"] == big
        rows.append(
            (
                f"peak RSS at {large['clusters']} clusters (generate+load+render)",
                f"{peak / MIB:.0f} MiB",
                "1024 MiB",
                f"{peak / GIB:.2f}",
                "< 1 GiB",
                _met(peak < GIB) if judged else "- (goal at 1000)",
            )
        )
    return rows


def validate_rows(result: dict[str, Any]) -> list[Row]:
    name = f"validation per ConfigMap ({result.get('clusters', '?')} clusters)"
    error = _error_row(name, result)
    if error:
        return [error]
    ours = result["ours"]["per_document"]
    measured = f"{_s(ours)}/doc ({1 / ours:.0f} docs/s, {result['documents']} docs)"
    if "cpu" not in result["ours"]:
        return [(name, measured, "re-run: no CPU time recorded", "n/a", ">= 20x faster", "-")]
    theirs = result.get("kubernetes_validate")
    if theirs is None:
        return [(name, measured, "n/a (kubernetes-validate not installed)", "n/a", ">= 20x faster", "-")]
    ratio = theirs["cpu"]["median"] / theirs["documents"] / (result["ours"]["cpu"]["median"] / result["documents"])
    return [
        (
            name,
            measured,
            f"kubernetes-validate {_s(theirs['per_document'])}/doc ({1 / theirs['per_document']:.0f} docs/s)",
            f"{ratio:.1f}x faster",
            ">= 20x faster",
            _met(ratio >= 20),
        )
    ]


COMPARISON_GOALS = {"diff": 1.5, "plan": 1.0}  # CPU time, in renders of the same fleet


def comparison_rows(figure: str, result: dict[str, Any], renders: list[dict[str, Any]], big: int) -> list[Row]:
    """``diff`` or ``plan`` of two fleets against one render of the same size."""
    n = result.get("clusters", "?")
    name = f"{figure} 2 fleets x {n} clusters, 1% pools changed"
    goal = f"<= {COMPARISON_GOALS[figure]:g}x one render"
    if "error" in result:
        message = result["error"]
        unavailable = message.startswith(f"{figure} not available")
        return [(name, f"n/a ({figure} not available)" if unavailable else f"n/a ({message})", "-", "n/a", goal, "-")]
    same = [r for r in renders if r.get("clusters") == n and "error" not in r]
    measured = (
        f"{figure} {_s(result['wall']['median'])} (cpu {_s(result['cpu']['median'])}, "
        f"{result['changed_pools']} pools changed)"
    )
    if not same:
        return [(name, measured, "no render figure at this size", "n/a", goal, "-")]
    render = same[0]["render"]["wall"]["median"]
    ratio = result["cpu"]["median"] / same[0]["render"]["cpu"]["median"]
    return [
        (
            name,
            measured,
            f"one render {_s(render)} (cpu {_s(same[0]['render']['cpu']['median'])})",
            f"{ratio:.2f}x",
            goal,
            _met(ratio <= COMPARISON_GOALS[figure]) if n == big else "- (goal at 1000)",
        )
    ]


WRITE_GOALS = (
    ("fresh", "fresh render", 3.0),
    ("unchanged", "re-render, nothing changed", 1.5),
    ("changed", "re-render, one cluster changed", 1.5),
)
WRITE_JUDGED_AT = 300  # clusters


def write_rows(results: list[dict[str, Any]]) -> list[Row]:
    """Each way of writing against ``render --check`` of the same fleet: whole processes, wall time."""

    def cell(figures: dict[str, Any]) -> str:
        return (
            f"{_s(figures['wall']['median'])} (user {_s(figures['user']['median'])}, "
            f"sys {_s(figures['sys']['median'])})"
        )

    rows: list[Row] = []
    for result in results:
        n = result.get("clusters", "?")
        error = _error_row(f"write {n} clusters", result)
        if error:
            rows.append(error)
            continue
        check = result["check"]
        for case, label, goal in WRITE_GOALS:
            ratio = result[case]["wall"]["median"] / check["wall"]["median"]
            rows.append(
                (
                    f"write {n} clusters: {label} ({result['files']} files, {result['reps']} rep{'s' if result['reps'] != 1 else ''})",
                    cell(result[case]),
                    f"render --check {cell(check)}",
                    f"{ratio:.2f}x",
                    f"<= {goal:g}x",
                    _met(ratio <= goal) if n == WRITE_JUDGED_AT else f"- (goal at {WRITE_JUDGED_AT})",
                )
            )
    return rows


# (command, floor, label, target ratio, judged on): the whole-command targets, judged at 1000 clusters
# (cold validate of the bundled example at any size). CPU time for what computes; wall time for the
# write pair, whose floor is mostly waiting on the disk.
COMMAND_GOALS = (
    ("validate-example", "import-floor", "cold validate of the bundled example", 2.0, "wall"),
    ("render-check", "validate", "render --check", 1.6, "cpu"),
    ("diff", "validate", "diff, 1 cluster changed", 1.3, "cpu"),
    ("plan", "validate", "plan, 1 cluster changed", 1.3, "cpu"),
    ("render-fresh", "write-floor", "fresh render", 4.0, "wall"),
)
FLOOR_LABELS = {
    "import-floor": 'python -c "import pydantic, ruamel.yaml, click"',
    "validate": "validate",
    "write-floor": "the same bytes as files + one syncfs",
}
PEAK_RSS_GOAL = 237 * MIB  # peak memory at 1000 clusters before this work


def commands_rows(results: list[dict[str, Any]], big: int) -> list[Row]:
    """Whole processes, each command beside its floor in the same run; one block of rows per code measured."""

    def cell(figures: dict[str, Any]) -> str:
        return f"{_s(figures['wall']['median'])} (cpu {_s(figures['cpu']['median'])})"

    rows: list[Row] = []
    for result in results:
        n = result.get("clusters", "?")
        error = _error_row(f"whole commands at {n} clusters", result)
        if error:
            rows.append(error)
            continue
        several = len(result["results"]) > 1
        for label, by_command in result["results"].items():
            suffix = f", {label}" if several else ""
            for command, floor, name, goal, basis in COMMAND_GOALS:
                ratio = by_command[command][basis]["median"] / by_command[floor][basis]["median"]
                judged = command == "validate-example" or n == big
                rows.append(
                    (
                        f"whole {name} at {n} clusters{suffix}",
                        cell(by_command[command]),
                        f"{FLOOR_LABELS[floor]} {cell(by_command[floor])}",
                        f"{ratio:.2f}x",
                        f"<= {goal:g}x ({basis})",
                        _met(ratio <= goal) if judged else f"- (goal at {big})",
                    )
                )
            peak_command = max(by_command, key=lambda c: by_command[c]["rss"]["median"])
            peak = by_command[peak_command]["rss"]["median"]
            rows.append(
                (
                    f"whole commands' peak RSS at {n} clusters{suffix}",
                    f"{peak / MIB:.0f} MiB ({peak_command})",
                    f"{PEAK_RSS_GOAL / MIB:.0f} MiB",
                    f"{peak / PEAK_RSS_GOAL:.2f}",
                    f"<= {PEAK_RSS_GOAL / MIB:.0f} MiB",
                    _met(peak <= PEAK_RSS_GOAL) if n == big else f"- (goal at {big})",
                )
            )
    return rows


def format_table(rows: list[Row], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(row[i]) for row in [HEADER, *rows]) for i in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in [HEADER, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 and 10 clusters, one repetition (smoke test)")
    parser.add_argument("--sizes", type=int, nargs="+", help="fleet sizes in clusters (default 1 10 100 1000)")
    parser.add_argument(
        "--write-sizes",
        type=int,
        nargs="+",
        help="fleet sizes for the write path (default 100 300 1000; 10 with --quick)",
    )
    parser.add_argument(
        "--command-sizes",
        type=int,
        nargs="+",
        help="fleet sizes for the whole commands (default 100 1000; 10 with --quick)",
    )
    parser.add_argument(
        "--code",
        action="append",
        metavar="LABEL=DIR",
        help="whole commands: a source tree to measure beside the others (repeatable; default: this tree)",
    )
    parser.add_argument("--reps", type=int, help="repetitions below 1000 clusters (default 5; 3 at 100)")
    parser.add_argument("--big-reps", type=int, default=1, help="repetitions at 1000 clusters (default 1)")
    parser.add_argument("--runs", type=int, help="cold-start runs per command (default 10; 3 with --quick)")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--json", metavar="PATH", help="also write the raw results to PATH")
    args = parser.parse_args(argv)

    sizes = args.sizes or ([1, 10] if args.quick else [1, 10, 100, 1000])
    write_sizes = args.write_sizes or ([10] if args.quick else [100, WRITE_JUDGED_AT, 1000])
    big = 1000

    def reps(n: int) -> int:
        if args.quick:
            return 1
        if n >= big:
            return int(args.big_reps)
        return int(args.reps or (3 if n >= 100 else 5))

    runs = args.runs or (3 if args.quick else 10)
    started = time.perf_counter()
    print(f"gpustack-gen benchmarks ({'quick' if args.quick else 'full'}): sizes {sizes}", file=sys.stderr)
    cold = _worker(["cold", "--runs", str(runs)], timeout=600)
    renders = [_worker(["render", "--clusters", str(n), "--reps", str(reps(n))], timeout=900) for n in sizes]
    validate_size = min(max(sizes), 100)
    validated = _worker(
        [
            "validate",
            "--clusters",
            str(validate_size),
            "--reps",
            str(1 if args.quick else 3),
            "--kv-docs",
            str(3 if args.quick else 20),
        ],
        timeout=600,
    )
    compare_size = max(sizes)
    compared = {
        figure: _worker([figure, "--clusters", str(compare_size), "--reps", str(reps(compare_size))], timeout=900)
        for figure in COMPARISON_GOALS
    }
    quick_write = ["--no-warm-up"] if args.quick else []  # the cold-start figure has written the .pyc files
    writes = [
        _worker(["write", "--clusters", str(n), "--reps", str(reps(n)), *quick_write], timeout=1800)
        for n in write_sizes
    ]
    code_args = [f"--code={code}" for code in args.code or []]
    commands = [
        _worker(["commands", "--clusters", str(n), "--reps", str(reps(n)), *quick_write, *code_args], timeout=3600)
        for n in args.command_sizes or ([10] if args.quick else [100, big])
    ]
    elapsed = time.perf_counter() - started

    rows = [
        *cold_rows(cold),
        *render_rows(renders, big),
        *validate_rows(validated),
        *(row for figure, result in compared.items() for row in comparison_rows(figure, result, renders, big)),
        *write_rows(writes),
        *commands_rows(commands, big),
    ]
    cores = os.cpu_count()
    print(
        f"machine: {cores} cores, Python {platform.python_version()} ({platform.machine()}, {platform.system()}); "
        f"CLI: {cold.get('cli', '?')}; floor: {cold.get('floor_command', '?')}; "
        f"cold start: {runs} runs each, ratio of wall medians; library figures (render, load, validation, diff, plan): "
        f"ratio of CPU-time medians (single-threaded, so other load on the machine does not skew it; "
        f"wall shown beside); write path: whole processes, ratio of wall medians; whole commands: each process's "
        f"own CPU time and peak RSS (wait4), with wall beside; total {elapsed:.0f} s"
    )
    print(format_table(rows, args.markdown))
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "cold": cold,
                    "render": renders,
                    "validate": validated,
                    **compared,
                    "write": writes,
                    "commands": commands,
                },
                indent=1,
            )
        )
    failed = [row for row in rows if row[1].startswith("error:")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
