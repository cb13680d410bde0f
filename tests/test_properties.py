"""Property tests: any valid fleet renders, deterministically, to files that read back as their data."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from gpustack_gen import load_fleet, render
from gpustack_gen.catalog import GPUS, GpuModel, builtin_mig_config, builtin_mig_config_names, place_layout
from gpustack_gen.catalog.profile_grammar import reads_profile
from gpustack_gen.compile.artifact import Artifact, EmbeddedYaml
from gpustack_gen.model import Fleet
from gpustack_gen.validate.artifacts import validate_artifacts
from gpustack_gen.versions.gpu_operator import OPERATOR_VERSIONS, OperatorVersion

EXAMPLES = 60
Draw = Callable[..., Any]

DNS_LABEL = st.from_regex(r"[a-z]([a-z0-9-]{0,14}[a-z0-9])?", fullmatch=True)
KUBERNETES = st.sampled_from(["1.27.16", "1.28.15", "1.29.15", "1.30.8", "1.31.4", "1.32.0", "1.33.1"])
QUANTITIES_CPU = st.sampled_from([None, "100m", "300m", "1", "2", 4, "8"])
QUANTITIES_MEMORY = st.sampled_from([None, "512Mi", "3Gi", "64Gi", "1G"])


def _mig_configs(gpu: GpuModel, mig_strategy: str, release: OperatorVersion) -> list[str]:
    names = []
    for name in builtin_mig_config_names(gpu):
        entry = builtin_mig_config(gpu, name)
        assert entry is not None
        readable = all(reads_profile(release, profile) for profile, _ in entry.mig_devices)
        if (
            entry.mig_enabled
            and entry.mig_devices
            and readable
            and (mig_strategy == "mixed" or len(entry.mig_devices) == 1)
        ):
            names.append(name)
    return names


def _layout(draw: Draw, gpu: GpuModel, mig_strategy: str, release: OperatorVersion) -> dict[str, int]:
    """The catalog's balanced layout, or a random one grown instance by instance while it still places."""
    balanced = dict(gpu.all_balanced)
    if balanced and (mig_strategy == "mixed" or len(balanced) == 1) and draw(st.booleans()):
        assert place_layout(gpu, balanced).ok
        return balanced
    profiles = [p.name for p in gpu.profiles if reads_profile(release, p.name)]
    if mig_strategy == "single":
        profiles = [draw(st.sampled_from(profiles))]
    layout: dict[str, int] = {}
    for _ in range(draw(st.integers(1, 8))):
        name = draw(st.sampled_from(profiles))
        candidate = {**layout, name: layout.get(name, 0) + 1}
        if place_layout(gpu, candidate).ok:
            layout = candidate
    if not layout:  # every profile fits once on an empty GPU; take the first that does
        layout = next({p: 1} for p in profiles if place_layout(gpu, {p: 1}).ok)
    return layout


def _sharing(draw: Draw, gpu: GpuModel, mig_strategy: str, release: OperatorVersion) -> dict[str, Any] | None:
    strategies = ["none", "time-slicing"]
    if release.has_mps and mig_strategy == "single":
        strategies.append("mps")
    if gpu.mig_capable:
        strategies.append("mig")
    strategy = draw(st.sampled_from(strategies))
    if strategy == "none":
        return None if draw(st.booleans()) else {"strategy": "none"}
    sharing: dict[str, Any] = {"strategy": strategy}
    if strategy in ("time-slicing", "mps"):
        limit = 16 if strategy == "time-slicing" else min(16, gpu.mps_max_replicas)
        sharing["replicas"] = draw(st.integers(2, limit))
        if draw(st.booleans()):
            sharing["renameByDefault"] = draw(st.booleans())
        if strategy == "time-slicing" and draw(st.booleans()):
            sharing["failRequestsGreaterThanOne"] = draw(st.booleans())
        return sharing
    configs = _mig_configs(gpu, mig_strategy, release)
    if configs and draw(st.booleans()):
        sharing["config"] = draw(st.sampled_from(configs))
    else:
        sharing["layout"] = _layout(draw, gpu, mig_strategy, release)
    return sharing


def _pool(draw: Draw, index: int, mig_strategy: str, release: OperatorVersion) -> dict[str, Any]:
    gpu = draw(st.sampled_from(GPUS) | st.sampled_from([g for g in GPUS if g.mig_capable]))  # more MIG
    name = f"pool-{index}"
    pool: dict[str, Any] = {
        "name": name,
        "gpu": draw(st.sampled_from([gpu.id, *gpu.product_labels])),
        "nodes": draw(st.integers(0, 4)),
        "gpusPerNode": draw(st.sampled_from([1, 2, 4, 8])),
        "nodeSelector": draw(
            st.sampled_from([{"pool": name}, {f"example.com/{name}": "true"}, {"gpu": name, "zone": "a"}])
        ),
    }
    if draw(st.booleans()):
        pool["taints"] = [{"key": "nvidia.com/gpu", "effect": draw(st.sampled_from(["NoSchedule", "NoExecute"]))}]
    sharing = _sharing(draw, gpu, mig_strategy, release)
    if sharing is not None:
        pool["sharing"] = sharing
    return pool


def _workloads(draw: Draw, cluster: dict[str, Any], capacities: dict[str, dict[str, tuple[int, int]]]) -> None:
    """Workloads that fit: per pool and resource, what one node advertises and the pool's total."""
    remaining = {
        (pool, resource): total for pool, table in capacities.items() for resource, (_, total) in table.items()
    }
    workloads = []
    for index in range(draw(st.integers(0, 4))):
        pool = draw(st.sampled_from(cluster["nodePools"]))
        sharing = pool.get("sharing") or {}
        workload: dict[str, Any] = {
            "name": f"svc-{index}",
            "namespace": draw(st.sampled_from(["ml", "research"])),
            "pool": pool["name"],
        }
        table = capacities[pool["name"]]
        if sharing.get("strategy") == "mig" and cluster.get("mig", {}).get("strategy") == "mixed":
            resource = draw(st.sampled_from(sorted(table)))
            gpu = load_gpu(pool["gpu"])
            profile = next(p for p in gpu.profiles if p.resource_name == resource)
            workload["migProfile"] = profile.name
        else:
            (resource,) = table
        per_node, _ = table[resource]
        one_only = sharing.get("strategy") == "mps" or sharing.get("failRequestsGreaterThanOne") is True
        gpus = 1 if one_only else draw(st.integers(1, min(per_node, 8)))
        if gpus != 1 or draw(st.booleans()):
            workload["gpus"] = gpus
        left = remaining[(pool["name"], resource)]
        replicas = draw(st.integers(0, min(left // gpus, 12)))
        remaining[(pool["name"], resource)] = left - gpus * replicas
        if replicas != 1 or draw(st.booleans()):
            workload["replicas"] = replicas
        for key, strategy in (("cpu", QUANTITIES_CPU), ("memory", QUANTITIES_MEMORY)):
            value = draw(strategy)
            if value is not None:
                workload[key] = value
        workloads.append(workload)
    if workloads:
        cluster["workloads"] = workloads


def load_gpu(name: str) -> GpuModel:
    from gpustack_gen.catalog import get_gpu

    gpu = get_gpu(name)
    assert gpu is not None
    return gpu


@st.composite
def fleets(draw: Draw) -> dict[str, Any]:
    """A valid fleet as a plain mapping: several clusters, pools of every strategy and model, workloads."""
    names = draw(st.lists(DNS_LABEL, min_size=1, max_size=3, unique=True))
    clusters = []
    for name in names:
        release = draw(st.sampled_from(OPERATOR_VERSIONS))
        mig_strategy = draw(st.sampled_from(["single", "mixed"]))
        operator: dict[str, Any] = {"version": release.version}
        if draw(st.booleans()):
            cdi: dict[str, Any] = {"enabled": draw(st.booleans())}
            if release.has_cdi_default and cdi["enabled"] and draw(st.booleans()):
                cdi["default"] = draw(st.booleans())
            operator["cdi"] = cdi
        if draw(st.booleans()):
            operator["driver"] = {"enabled": draw(st.booleans())}
        cluster: dict[str, Any] = {
            "name": name,
            "kubernetes": draw(KUBERNETES),
            "containerRuntime": draw(st.sampled_from(["containerd", "cri-o"])),
            "operator": operator,
            "nodePools": [_pool(draw, i, mig_strategy, release) for i in range(draw(st.integers(1, 3)))],
        }
        if mig_strategy == "mixed" or draw(st.booleans()):
            cluster["mig"] = {"strategy": mig_strategy}
        clusters.append(cluster)
    fleet: dict[str, Any] = {"apiVersion": "gpustack-gen/v1alpha1", "kind": "Fleet", "clusters": clusters}
    if draw(st.booleans()):
        fleet["defaults"] = {"operator": {"namespace": draw(st.sampled_from(["gpu-operator", "nvidia-gpu"]))}}
    # Capacities come from the model itself, so that the workloads drawn next always fit.
    without_workloads = load_fleet(fleet)
    for cluster in clusters:
        resolved = without_workloads.cluster(cluster["name"])
        assert resolved is not None
        capacities = {
            pool.name: {
                resource: (per_node, resolved.resources_total(pool)[resource])
                for resource, per_node in resolved.resources_per_node(pool).items()
            }
            for pool in resolved.pools
        }
        _workloads(draw, cluster, capacities)
    return fleet


def _plain(data: Any) -> Any:
    if isinstance(data, EmbeddedYaml):
        return _plain(data.data)
    if isinstance(data, dict):
        return {k: _plain(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_plain(v) for v in data]
    return data


def _read_back(expected: Any, loaded: Any) -> Any:
    """``loaded`` with every string that stands where ``expected`` holds an EmbeddedYaml parsed again."""
    if isinstance(expected, EmbeddedYaml):
        assert isinstance(loaded, str)
        return _read_back(expected.data, YAML(typ="safe", pure=True).load(loaded))
    if isinstance(expected, dict) and isinstance(loaded, dict):
        return {k: _read_back(expected[k], v) if k in expected else v for k, v in loaded.items()}
    if isinstance(expected, list | tuple) and isinstance(loaded, list):
        return [_read_back(e, v) for e, v in zip(expected, loaded, strict=False)] + loaded[len(expected) :]
    return loaded


def _rewrap(expected: Any, loaded: Any) -> Any:
    """Parsed data in the compilers' shape (EmbeddedYaml where they had one), to validate it again."""
    if isinstance(expected, EmbeddedYaml):
        return EmbeddedYaml(_rewrap(expected.data, YAML(typ="safe", pure=True).load(loaded)))
    if isinstance(expected, dict) and isinstance(loaded, dict):
        return {k: _rewrap(expected[k], v) if k in expected else v for k, v in loaded.items()}
    if isinstance(expected, list | tuple) and isinstance(loaded, list):
        return [_rewrap(e, v) for e, v in zip(expected, loaded, strict=False)] + loaded[len(expected) :]
    return loaded


SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(fleets())
def test_every_valid_fleet_renders_to_files_that_read_back_as_their_data(mapping: dict[str, Any]) -> None:
    fleet = load_fleet(mapping)
    for resolved in fleet.clusters:
        for pool in resolved.pools:
            event(f"pool strategy {pool.sharing.strategy} ({resolved.mig_strategy})")
    bundle = render(fleet)
    assert bundle.files
    yaml = YAML(typ="safe", pure=True)
    by_cluster: dict[str, list[Artifact]] = {}
    for rendered in bundle.values():
        loaded = list(yaml.load_all(rendered.text))
        assert len(loaded) == len(rendered.documents), rendered.path
        for document, back in zip(rendered.documents, loaded, strict=True):
            assert _read_back(document, back) == _plain(document), rendered.path
        cluster_name, _, path = rendered.path.partition("/")
        documents = tuple(_rewrap(d, b) for d, b in zip(rendered.documents, loaded, strict=True))
        by_cluster.setdefault(cluster_name, []).append(Artifact(path, rendered.kind, documents))
    # The text, not only the data the compilers held, passes every artifact schema.
    for cluster_name, artifacts in by_cluster.items():
        owner = fleet.cluster(cluster_name)
        assert owner is not None
        validate_artifacts(owner, artifacts)


@SETTINGS
@given(fleets())
def test_render_is_deterministic_and_render_then_check_is_clean(mapping: dict[str, Any]) -> None:
    first = render(load_fleet(mapping))
    second = render(load_fleet(mapping))
    assert [(p, f.text.encode()) for p, f in first.items()] == [(p, f.text.encode()) for p, f in second.items()]
    with tempfile.TemporaryDirectory() as tmp:
        out = f"{tmp}/out"
        summary = first.write(out)
        assert set(summary.written) == set(first.files)
        drift = second.drift(out)
        assert drift.clean, drift
        again = second.write(out)
        assert again.written == () and again.removed == ()


@SETTINGS
@given(fleets(), st.data())
def test_rendering_one_cluster_gives_exactly_its_files(mapping: dict[str, Any], data: st.DataObject) -> None:
    fleet: Fleet = load_fleet(mapping)
    whole = render(fleet)
    name = data.draw(st.sampled_from([c.name for c in fleet.clusters]))
    one = render(fleet, [name])
    assert {p: f.text for p, f in one.files.items()} == {
        p: f.text for p, f in whole.files.items() if p.startswith(f"{name}/")
    }


@SETTINGS
@given(fleets())
def test_a_fleet_diffed_with_itself_is_empty(mapping: dict[str, Any]) -> None:
    from gpustack_gen.diff import diff_fleets

    fleet = load_fleet(mapping)
    result = diff_fleets(fleet, load_fleet(mapping))
    assert result.empty
    assert result.findings == []
    assert result.summary() == []
