"""The measurements. Each figure runs in its own process and prints one JSON object on stdout.

    python -m benchmarks.figures cold --runs 10
    python -m benchmarks.figures render --clusters 100 --reps 3
    python -m benchmarks.figures validate --clusters 100 --reps 3 --kv-docs 20
    python -m benchmarks.figures diff --clusters 1000 --reps 1
    python -m benchmarks.figures plan --clusters 1000 --reps 1
    python -m benchmarks.figures write --clusters 300 --reps 1 [--dir /path/on/the/disk/to/test]
    python -m benchmarks.figures commands --clusters 100 --reps 3 [--code before=/tmp/old-tree --code after=.]
    python -m benchmarks.figures profile --clusters 100 [--out render.prof]

``python -m benchmarks`` runs them and prints the table. One process per figure (and per fleet size)
keeps peak RSS (``ru_maxrss``) of one size from hiding in another's, and keeps caches honest.
Library figures are in-process wall times (``time.perf_counter``) after one warm-up render of a
one-cluster fleet, so one-time costs (imports, schema compilation) are not counted in them; the cold
start figure counts exactly those, in whole processes. The write path is measured in whole processes
too (``gpustack-gen render``), with user and system CPU apart: writing is mostly system time.
"""

from __future__ import annotations

import argparse
import copy
import gc
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = "examples/fleet.yaml"  # relative to REPO_ROOT, which is the cold-start processes' working folder
FLOOR_IMPORTS = "import pydantic, ruamel.yaml, click"
# ``import pydantic`` is lazy (pydantic 2 loads BaseModel on first attribute access), so the floor above
# holds none of pydantic's model machinery. This one also builds one model, as any use of pydantic must.
MODEL_FLOOR = "import click, ruamel.yaml; from pydantic import create_model; create_model('M', x=(int, ...))"


def _stats(samples: list[float]) -> dict[str, Any]:
    return {"best": min(samples), "median": statistics.median(samples), "samples": samples}


# Memos that an earlier repetition (or the warm-up) would have filled: cleared before every timed call,
# so that each repetition does the work of a first render in a fresh process. Schemas and compiled
# validators stay loaded: those are one-time costs, counted by the cold-start figure.
MEMOS = (
    ("gpustack_gen.yamlio.writer", "_scalar"),
    ("gpustack_gen.yamlio.writer", "reads_as_string"),
    ("gpustack_gen.emit.header", "_one_line"),
    ("gpustack_gen.validate.device_plugin", "_memoised"),
    ("gpustack_gen.validate.device_plugin", "_memoised_unversioned"),
    ("gpustack_gen.validate.mig_parted", "_memoised"),
    ("gpustack_gen.validate.mig_parted", "_clean_entry"),
    ("gpustack_gen.validate.mig_parted", "_clean_name"),
    ("gpustack_gen.validate.mig_parted", "_clean_skeleton"),
    ("gpustack_gen.validate.kubernetes", "_memoised_part"),
    ("gpustack_gen.validate.kubernetes", "_memoised_object"),
    ("gpustack_gen.validate.artifacts", "_memoised_operator_findings"),
)


def clear_memos() -> None:
    import importlib

    for module_name, name in MEMOS:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        cache_clear = getattr(getattr(module, name, None), "cache_clear", None)
        if cache_clear is not None:
            cache_clear()


def _timed(function: Callable[[], Any], reps: int) -> tuple[dict[str, Any], dict[str, Any], Any]:
    """Wall and CPU seconds of ``reps`` calls (memos cleared and garbage collected between calls), and
    the last result."""
    walls: list[float] = []
    cpus: list[float] = []
    result = None
    for _ in range(reps):
        result = None
        clear_memos()
        gc.collect()
        cpu, wall = time.process_time(), time.perf_counter()
        result = function()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return _stats(walls), _stats(cpus), result


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux


def cli_command() -> tuple[list[str], str]:
    """How to start the CLI: the venv's console script when it exists, else ``python -m gpustack_gen``."""
    script = Path(sys.executable).parent / "gpustack-gen"
    if script.is_file():
        return [str(script)], str(script.relative_to(REPO_ROOT) if script.is_relative_to(REPO_ROOT) else script)
    return [sys.executable, "-m", "gpustack_gen"], f"{Path(sys.executable).name} -m gpustack_gen"


# --- figure 1: cold start -------------------------------------------------------------------------------


def cold_start(runs: int) -> dict[str, Any]:
    """Whole processes, round-robin so that drift on the machine hits every command alike."""
    cli, cli_label = cli_command()
    commands = {
        "help": [*cli, "--help"],
        "validate": [*cli, "validate", EXAMPLE],
        "floor": [sys.executable, "-c", FLOOR_IMPORTS],
        "model_floor": [sys.executable, "-c", MODEL_FLOOR],
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for attempt in range(runs + 1):  # the first round warms the page cache and writes .pyc files
        for name, argv in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(argv, cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if done.returncode != 0:
                raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-2000:]}")
            if attempt:
                walls[name].append(wall)
                cpus[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return {
        "figure": "cold",
        "cli": cli_label,
        "example": EXAMPLE,
        "floor_command": f'{Path(sys.executable).name} -c "{FLOOR_IMPORTS}"',
        "model_floor_command": f'{Path(sys.executable).name} -c "{MODEL_FLOOR}"',
        "runs": runs,
        "wall": {name: _stats(samples) for name, samples in walls.items()},
        "cpu": {name: _stats(samples) for name, samples in cpus.items()},
    }


# --- figure 2: render throughput ------------------------------------------------------------------------


def _warm_up() -> None:
    from gpustack_gen import load_fleet, render

    from .fleetgen import generate_fleet

    render(load_fleet(generate_fleet(1, seed=1)))


def _with_embedded(document: Any) -> list[Any]:
    """The document and the data of every YAML file embedded in it: each is a document for the emitter."""
    from gpustack_gen.compile.artifact import EmbeddedYaml

    found = [document]
    stack = [document]
    while stack:
        value = stack.pop()
        if isinstance(value, EmbeddedYaml):
            found.append(value.data)
            stack.append(value.data)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            stack.extend(value)
    return found


def render_throughput(clusters: int, reps: int) -> dict[str, Any]:
    from gpustack_gen import load_fleet, render

    # The fast writer and ruamel's emitter, which it must match byte for byte.
    from gpustack_gen.yamlio.writer import dump_yaml, dump_yaml_reference, fast_dump_yaml

    from .fleetgen import generate_fleet

    _warm_up()
    mapping = generate_fleet(clusters)
    load_wall, load_cpu, fleet = _timed(lambda: load_fleet(mapping), reps)
    render_wall, render_cpu, bundle = _timed(lambda: render(fleet), reps)
    peak = _peak_rss_bytes()  # generation + load + render; the floor below allocates little
    documents = [document for rendered in bundle.values() for document in rendered.documents]
    files = len(bundle)
    text_bytes = sum(len(rendered.text.encode()) for rendered in bundle.values())

    def serialize() -> None:
        for document in documents:
            dump_yaml(document)

    floor_wall, floor_cpu, _ = _timed(serialize, reps)

    def serialize_with_ruamel() -> None:
        for document in documents:
            dump_yaml_reference(document)

    ruamel_wall, ruamel_cpu, _ = _timed(serialize_with_ruamel, reps)
    emitted = [d for document in documents for d in _with_embedded(document)]
    fallbacks = sum(fast_dump_yaml(d) is None for d in emitted)
    extra = {
        "floor_ruamel": {"wall": ruamel_wall, "cpu": ruamel_cpu},
        "emitted": len(emitted),
        "fallbacks": fallbacks,
    }
    return {
        "figure": "render",
        "clusters": clusters,
        "pools": sum(len(c.pools) for c in fleet.clusters),
        "workloads": sum(len(c.workloads) for c in fleet.clusters),
        "files": files,
        "documents": len(documents),
        "bytes": text_bytes,
        "reps": reps,
        "load": {"wall": load_wall, "cpu": load_cpu},
        "render": {"wall": render_wall, "cpu": render_cpu},
        "floor": {"wall": floor_wall, "cpu": floor_cpu},
        **extra,
        "peak_rss_bytes": peak,
    }


# --- figure 3: validation -------------------------------------------------------------------------------

CONFIGMAP_KINDS = ("device-plugin-configmap", "mig-parted-configmap")


def _configmaps(clusters: int) -> list[tuple[dict[str, Any], str, str, str]]:
    """(ConfigMap document, artifact kind, device plugin version, Kubernetes version) of a rendered fleet."""
    from gpustack_gen import load_fleet, render

    from .fleetgen import generate_fleet

    fleet = load_fleet(generate_fleet(clusters))
    by_name = {c.name: c for c in fleet.clusters}
    found = []
    for rendered in render(fleet).values():
        if rendered.kind not in CONFIGMAP_KINDS:
            continue
        cluster = by_name[rendered.path.split("/", 1)[0]]
        for document in rendered.documents:
            found.append((document, rendered.kind, cluster.operator.release.device_plugin, cluster.kubernetes))
    return found


def validation(clusters: int, reps: int, kv_docs: int) -> dict[str, Any]:
    """Our checks of each ConfigMap against ``kubernetes_validate.validate`` on the same ConfigMaps.

    Ours: the strict Kubernetes schema of the ConfigMap as written (``check_kubernetes_object``, schemas
    loaded once per process; counted when this gpustack-gen has it) plus the device-plugin or
    mig-parted checks of every config embedded in it. Theirs: ``kubernetes_validate.validate`` (strict)
    on the same ConfigMap as written, which rereads its schema files on every call.
    """
    from gpustack_gen.compile.artifact import EmbeddedYaml
    from gpustack_gen.emit import dump_yaml
    from gpustack_gen.validate import check_device_plugin_config, check_mig_parted_config

    check_kubernetes_object: Callable[[dict[str, Any], str], list[Any]] | None
    try:
        from gpustack_gen.validate.kubernetes import check_kubernetes_object
    except ImportError:
        check_kubernetes_object = None

    _warm_up()
    configmaps = _configmaps(clusters)
    # Each ConfigMap as written: data values are YAML text.
    written = [
        {
            **document,
            "data": {k: dump_yaml(v.data) if isinstance(v, EmbeddedYaml) else v for k, v in document["data"].items()},
        }
        for document, *_ in configmaps
    ]

    def ours() -> int:
        findings = 0
        for (document, kind, plugin_version, kubernetes), as_written in zip(configmaps, written, strict=True):
            if check_kubernetes_object is not None:
                findings += len(check_kubernetes_object(as_written, kubernetes))
            for value in document["data"].values():
                if not isinstance(value, EmbeddedYaml):
                    continue
                if kind == "device-plugin-configmap":
                    found = check_device_plugin_config(
                        value.data, device_plugin_version=plugin_version, mps_root_from_operator=True
                    )
                else:
                    found = check_mig_parted_config(value.data)
                findings += len(found)
        return findings

    ours_wall, ours_cpu, findings = _timed(ours, reps)
    result: dict[str, Any] = {
        "figure": "validate",
        "clusters": clusters,
        "documents": len(configmaps),
        "embedded_configs": sum(
            isinstance(v, EmbeddedYaml) for document, *_ in configmaps for v in document["data"].values()
        ),
        "ours_includes_kubernetes_schema": check_kubernetes_object is not None,
        "findings": findings,
        "reps": reps,
        "ours": {"wall": ours_wall, "cpu": ours_cpu, "per_document": ours_wall["median"] / len(configmaps)},
    }
    try:
        import kubernetes_validate  # type: ignore[import-untyped]
    except ImportError:
        result["kubernetes_validate"] = None
        return result
    # Versions newer than the package knows are validated against its newest schemas, as gpustack-gen does.
    newest = kubernetes_validate.utils.latest_version()
    sample = [
        (as_written, min(kubernetes, newest, key=lambda v: tuple(int(p) for p in v.split(".")[:2])))
        for (*_, kubernetes), as_written in zip(configmaps, written, strict=True)
    ]
    sample = sample[:kv_docs]

    def theirs() -> None:
        for document, kubernetes in sample:
            kubernetes_validate.validate(document, kubernetes, strict=True)

    kubernetes_validate.validate(*sample[0], strict=True)  # warm-up: imports and first file reads
    theirs_wall, theirs_cpu, _ = _timed(theirs, max(1, min(reps, 2)))
    result["kubernetes_validate"] = {
        "version": getattr(kubernetes_validate, "__version__", "?"),
        "documents": len(sample),
        "wall": theirs_wall,
        "cpu": theirs_cpu,
        "per_document": theirs_wall["median"] / len(sample),
    }
    return result


# --- figure 4: diff and plan ----------------------------------------------------------------------------


def _comparison(figure: str) -> Callable[[Any, Any], Any]:
    if figure == "diff":
        from gpustack_gen.diff import diff_fleets

        return diff_fleets
    from gpustack_gen.plan import plan_fleets

    return plan_fleets


def compare_fleets(figure: str, clusters: int, reps: int) -> dict[str, Any]:
    """``diff_fleets`` or ``plan_fleets`` of a fleet and a copy with 1% of its pools changed."""
    result: dict[str, Any] = {"figure": figure, "clusters": clusters}
    try:
        compare = _comparison(figure)
    except ImportError as exc:
        result["error"] = f"{figure} not available ({exc})"
        return result
    from gpustack_gen import load_fleet

    from .fleetgen import generate_fleet, perturb

    _warm_up()
    old_mapping = generate_fleet(clusters)
    new_mapping, changed = perturb(old_mapping, 0.01)
    old, new = load_fleet(old_mapping), load_fleet(new_mapping)
    try:
        compare(load_fleet(generate_fleet(1, seed=1)), load_fleet(generate_fleet(1, seed=2)))  # warm-up
        wall, cpu, _ = _timed(lambda: compare(old, new), reps)
    except Exception as exc:  # being built by someone else: report, do not crash the table
        result["error"] = f"{compare.__name__}(old, new) failed: {type(exc).__name__}: {exc}"
        return result
    result.update({"changed_pools": changed, "reps": reps, "wall": wall, "cpu": cpu})
    return result


# --- figure 5: the write path --------------------------------------------------------------------------

WRITE_CASES = ("check", "fresh", "unchanged", "changed")


def _one_cluster_changed(fleet: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``fleet`` whose first cluster's first pool has one more node (more capacity stays valid)."""
    changed = copy.deepcopy(fleet)
    changed["clusters"][0]["nodePools"][0]["nodes"] += 1
    return changed


def _timed_process(argv: list[str], cwd: Path, expect: int = 0) -> dict[str, float]:
    """Wall, user and system seconds of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != expect:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-2000:]}")
    return {"wall": wall, "user": after.ru_utime - before.ru_utime, "sys": after.ru_stime - before.ru_stime}


def write_path(clusters: int, reps: int, where: str | None, warm_up: bool = True) -> dict[str, Any]:
    """``gpustack-gen render FLEET --out OUT`` in whole processes, against ``render --check`` of an
    up-to-date folder (the same load, compile, validation and reading of the folder, writing nothing):
    a fresh render into a new folder, a re-render with nothing changed, and one after a one-cluster edit.

    Each repetition renders into a folder of its own, and nothing is deleted until the end: on a file
    system without a journal, ext4 passes over inodes freed in the last 30 seconds when it allocates
    one, so deleting a large tree just before a timed run would slow that run's file creation down.
    """
    from ruamel.yaml import YAML

    from .fleetgen import generate_fleet

    cli, cli_label = cli_command()
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    mapping = generate_fleet(clusters)
    samples: dict[str, list[dict[str, float]]] = {case: [] for case in WRITE_CASES}
    with tempfile.TemporaryDirectory(prefix="gpustack-gen-write-", dir=where) as tmp:
        root = Path(tmp)
        fleet = root / "fleet.yaml"  # one name for both versions: every file's header names the fleet file
        texts = []
        for data in (mapping, _one_cluster_changed(mapping)):
            stream = io.StringIO()
            yaml.dump(data, stream)
            texts.append(stream.getvalue())
        original, edited = texts

        def run(text: str, out: str, *extra: str) -> dict[str, float]:
            fleet.write_text(text, encoding="utf-8")
            return _timed_process([*cli, "render", fleet.name, "--out", out, *extra], root)

        if warm_up:
            run(original, "warm-up")  # .pyc files, the page cache
        for rep in range(reps):
            out = f"rendered-{rep}"
            samples["fresh"].append(run(original, out))
            samples["unchanged"].append(run(original, out))
            samples["check"].append(run(original, out, "--check"))
            samples["changed"].append(run(edited, out))
        files = [p for p in (root / "rendered-0").rglob("*") if p.is_file()]
        size = sum(p.stat().st_size for p in files)
    return {
        "figure": "write",
        "clusters": clusters,
        "cli": cli_label,
        "files": len(files),
        "bytes": size,
        "reps": reps,
        **{
            case: {part: _stats([s[part] for s in runs]) for part in ("wall", "user", "sys")}
            for case, runs in samples.items()
        },
    }


# --- figure 6: whole commands against their floors ----------------------------------------------------

# The file-write floor: the bytes of a render, held in one JSON file, written as files, then one syncfs.
WRITE_FLOOR = """
import ctypes, json, os, sys
files = json.load(open(sys.argv[1], encoding="utf-8"))
root = sys.argv[2]
for path, text in files:
    target = os.path.join(root, path)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w", encoding="utf-8") as stream:
        stream.write(text)
fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
ctypes.CDLL(None).syncfs(fd)
os.close(fd)
"""
# Packs a rendered folder into that JSON file; prints its file and document counts.
PACK_FOLDER = """
import json, pathlib, sys
root = pathlib.Path(sys.argv[1])
files = [[p.relative_to(root).as_posix(), p.read_text(encoding="utf-8")] for p in sorted(root.rglob("*")) if p.is_file()]
pathlib.Path(sys.argv[2]).write_text(json.dumps(files), encoding="utf-8")
print(len(files), sum(text.count("\\n---\\n") + 1 for _, text in files))
"""
COMMANDS = (
    "import-floor",
    "validate-example",
    "validate",
    "render-check",
    "diff",
    "plan",
    "render-fresh",
    "write-floor",
)
# (command, its floor): the ratios the targets are set on.
COMMAND_RATIOS = (
    ("validate-example", "import-floor"),
    ("render-check", "validate"),
    ("diff", "validate"),
    ("plan", "validate"),
    ("render-fresh", "write-floor"),
)


def _run_measured(argv: list[str], cwd: Path, env: dict[str, str], expect: tuple[int, ...] = (0,)) -> dict[str, float]:
    """Wall, user and system seconds and peak RSS (bytes) of one whole process, from its own ``wait4``."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = code = os.waitstatus_to_exitcode(status)
        if code not in expect:
            stderr.seek(0)
            raise RuntimeError(f"{' '.join(argv)} exited {code}: {stderr.read()[-2000:].decode(errors='replace')}")
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "user": usage.ru_utime,
        "sys": usage.ru_stime,
        "rss": usage.ru_maxrss * 1024,  # kilobytes on Linux
    }


def whole_commands(
    clusters: int, reps: int, codes: dict[str, Path], where: str | None, warm_up: bool
) -> dict[str, Any]:
    """The commands users run, as whole processes, each beside its floor, in one run (see COMMAND_RATIOS).

    Each code (a label and a source tree, e.g. a checkout of an earlier commit) runs as
    ``python -m gpustack_gen`` with that tree first on ``PYTHONPATH``; rounds interleave every command of
    every code, so drift on a shared machine hits all alike. The fleet is ``generate_mixed_fleet``; the
    changed fleet has one more node in the first cluster's first pool (one of N clusters changed).
    """
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    samples: dict[str, dict[str, list[dict[str, float]]]] = {label: {c: [] for c in COMMANDS} for label in codes}
    with tempfile.TemporaryDirectory(prefix="gpustack-gen-commands-", dir=where) as tmp:
        root = Path(tmp)
        # The fleets are generated, and the rendered folders packed, in processes of their own: a child's
        # ru_maxrss starts from its parent's resident size at fork, so this process must stay small.
        here_env = {**base_env, "PYTHONPATH": str(REPO_ROOT)}
        setup = [
            sys.executable,
            "-m",
            "benchmarks.figures",
            "commands-setup",
            "--clusters",
            str(clusters),
            "--dir",
            tmp,
        ]
        subprocess.run(setup, env=here_env, check=True)
        backends = json.loads((root / "backends.json").read_text(encoding="utf-8"))
        envs = {label: {**base_env, "PYTHONPATH": str(code)} for label, code in codes.items()}
        cli = [sys.executable, "-m", "gpustack_gen"]  # the same for every code: PYTHONPATH picks the tree
        documents = files = 0
        for label in codes:  # untimed: the rendered folder check and plan read, and the write floor's bytes
            _run_measured([*cli, "render", "fleet.yaml", "--out", f"rendered-{label}"], root, envs[label])
            pack = [sys.executable, "-c", PACK_FOLDER, f"rendered-{label}", f"payload-{label}.json"]
            counts = subprocess.run(pack, cwd=root, env=base_env, check=True, capture_output=True, text=True)
            files, documents = map(int, counts.stdout.split())

        def argv(label: str, command: str, rep: int) -> tuple[list[str], Path, tuple[int, ...]]:
            here, fleet = root, "fleet.yaml"
            if command == "import-floor":
                return [sys.executable, "-c", FLOOR_IMPORTS], codes[label], (0,)
            if command == "validate-example":
                return [*cli, "validate", EXAMPLE], codes[label], (0,)
            if command == "validate":
                return [*cli, "validate", fleet], here, (0,)
            if command == "render-check":
                return [*cli, "render", fleet, "--out", f"rendered-{label}", "--check"], here, (0,)
            if command == "diff":
                return [*cli, "diff", "old/fleet.yaml", fleet], here, (0,)
            if command == "plan":  # 1: a step the plan cannot order is still a plan printed
                return [*cli, "plan", "old/fleet.yaml", fleet, "--rendered", f"rendered-{label}"], here, (0, 1)
            if command == "render-fresh":
                return [*cli, "render", fleet, "--out", f"fresh-{label}-{rep}"], here, (0,)
            floor = [sys.executable, "-c", WRITE_FLOOR, f"payload-{label}.json", f"floor-{label}-{rep}"]
            return floor, here, (0,)

        # Nothing is deleted until the end: see write_path on ext4 and recently freed inodes.
        for rep in range(reps + (1 if warm_up else 0)):
            for command in COMMANDS:
                for label in codes:
                    args, cwd, expect = argv(label, command, rep)
                    measured = _run_measured(args, cwd, envs[label], expect)
                    if rep or not warm_up:
                        samples[label][command].append(measured)
    return {
        "figure": "commands",
        "clusters": clusters,
        "backends": backends,
        "files": files,
        "documents": documents,
        "reps": reps,
        "codes": {label: str(code) for label, code in codes.items()},
        "results": {
            label: {
                command: {part: _stats([s[part] for s in runs]) for part in ("wall", "cpu", "user", "sys", "rss")}
                for command, runs in by_command.items()
            }
            for label, by_command in samples.items()
        },
    }


def write_command_fleets(clusters: int, folder: Path) -> None:
    """old/fleet.yaml (the mixed fleet), fleet.yaml (one cluster changed) and backends.json (counts)."""
    from ruamel.yaml import YAML

    from .fleetgen import generate_mixed_fleet

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    mapping = generate_mixed_fleet(clusters)
    (folder / "old").mkdir()
    for path, data in (("old/fleet.yaml", mapping), ("fleet.yaml", _one_cluster_changed(mapping))):
        with open(folder / path, "w", encoding="utf-8") as stream:
            yaml.dump(data, stream)
    backends = {
        b: sum(c.get("backend", "gpu-operator") == b for c in mapping["clusters"])
        for b in ("gpu-operator", "hami", "dra")
    }
    (folder / "backends.json").write_text(json.dumps(backends), encoding="utf-8")


# --- profiles -------------------------------------------------------------------------------------------


def profile_render(clusters: int, out: str | None, top: int) -> None:
    """cProfile one render of ``clusters`` clusters (after a warm-up) and print the top functions."""
    import cProfile
    import pstats

    from gpustack_gen import load_fleet, render

    from .fleetgen import generate_fleet

    _warm_up()
    fleet = load_fleet(generate_fleet(clusters))
    clear_memos()
    gc.collect()
    profiler = cProfile.Profile()
    profiler.enable()
    render(fleet)
    profiler.disable()
    if out:
        profiler.dump_stats(out)
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)


def _code(text: str) -> tuple[str, Path]:
    label, _, folder = text.partition("=")
    if not folder or not (Path(folder) / "gpustack_gen" / "__main__.py").is_file():
        raise SystemExit(f"--code {text}: expected LABEL=DIR, DIR a gpustack-gen source tree")
    return label, Path(folder).resolve()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.figures", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="figure", required=True)
    cold = sub.add_parser("cold", help="cold start of the CLI against the import floor")
    cold.add_argument("--runs", type=int, default=10)
    setup = sub.add_parser("commands-setup", help="write the fleets of the whole-command figure into --dir")
    setup.add_argument("--clusters", type=int, required=True)
    setup.add_argument("--dir", required=True)
    for name in ("render", "validate", "diff", "plan", "write", "commands", "profile"):
        command = sub.add_parser(name)
        command.add_argument("--clusters", type=int, default=100)
        command.add_argument("--reps", type=int, default=3)
        if name == "write":
            command.add_argument("--dir", help="the folder to write in (default: the system's temporary folder)")
            command.add_argument("--no-warm-up", action="store_true", help="no untimed render first (smoke runs)")
        if name == "commands":
            command.add_argument("--dir", help="the folder to write in (default: the system's temporary folder)")
            command.add_argument("--no-warm-up", action="store_true", help="no untimed round first (smoke runs)")
            command.add_argument(
                "--code",
                action="append",
                metavar="LABEL=DIR",
                help="a source tree to measure (repeatable; default: this one, labelled 'this')",
            )
        if name == "validate":
            command.add_argument("--kv-docs", type=int, default=20, help="ConfigMaps given to kubernetes-validate")
        if name == "profile":
            command.add_argument("--out", help="also write the cProfile stats to this file")
            command.add_argument("--top", type=int, default=40)
    args = parser.parse_args(argv)
    if args.figure == "cold":
        result = cold_start(args.runs)
    elif args.figure == "render":
        result = render_throughput(args.clusters, args.reps)
    elif args.figure == "validate":
        result = validation(args.clusters, args.reps, args.kv_docs)
    elif args.figure in ("diff", "plan"):
        result = compare_fleets(args.figure, args.clusters, args.reps)
    elif args.figure == "commands-setup":
        write_command_fleets(args.clusters, Path(args.dir))
        return
    elif args.figure == "commands":
        codes = dict(_code(text) for text in args.code or [f"this={REPO_ROOT}"])
        result = whole_commands(args.clusters, args.reps, codes, args.dir, warm_up=not args.no_warm_up)
    elif args.figure == "write":
        result = write_path(args.clusters, args.reps, args.dir, warm_up=not args.no_warm_up)
    else:
        profile_render(args.clusters, args.out, args.top)
        return
    print(json.dumps(result))


if __name__ == "__main__":
    main()
