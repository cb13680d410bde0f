"""The GitOps example (examples/gitops/fleet.yaml) and its committed output must not drift apart."""

from __future__ import annotations

import os
from pathlib import Path

from gpustack_gen import load_fleet, render

EXAMPLE = Path(__file__).resolve().parent.parent.parent / "examples" / "gitops"
WRAPPERS = ("namespace.yaml", "delivery/argocd-application.yaml", "delivery/flux-helmrelease.yaml", "helmfile.yaml")


def test_committed_gitops_output_matches_a_fresh_render() -> None:
    fleet = load_fleet(EXAMPLE / "fleet.yaml", name="examples/gitops/fleet.yaml")
    bundle = render(fleet)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        bundle.write(EXAMPLE / "rendered")
    drift = bundle.drift(EXAMPLE / "rendered")
    assert drift.clean, (
        f"examples/gitops/rendered is out of date (UPDATE_GOLDEN=1 pytest tests/compile/test_gitops_golden.py): {drift}"
    )
    committed = sorted(p.relative_to(EXAMPLE / "rendered").as_posix() for p in (EXAMPLE / "rendered").rglob("*.yaml"))
    assert committed == sorted(bundle.files)


def test_every_cluster_has_every_wrapper() -> None:
    fleet = load_fleet(EXAMPLE / "fleet.yaml")
    assert {c.name for c in fleet.clusters} == {"prod", "stage", "train"}
    for cluster in fleet.clusters:
        assert cluster.delivery.wrap == ("argocd", "flux", "helmfile")
        for name in WRAPPERS:
            assert (EXAMPLE / "rendered" / cluster.name / name).is_file(), f"{cluster.name}/{name}"


def test_same_clusters_as_the_main_example() -> None:
    """Apart from delivery, the GitOps example is examples/fleet.yaml: same values, same ConfigMaps."""
    main = EXAMPLE.parent / "rendered"
    for cluster in ("prod", "stage", "train"):
        for name in ("gpu-operator-values.yaml", "clusterpolicy-patch.yaml", "node-labels.yaml", "capacity.yaml"):
            ours = (EXAMPLE / "rendered" / cluster / name).read_text(encoding="utf-8")
            theirs = (main / cluster / name).read_text(encoding="utf-8")
            assert ours.replace("examples/gitops/fleet.yaml", "examples/fleet.yaml") == theirs, f"{cluster}/{name}"


def test_gitops_example_fits_the_fleet_schema() -> None:
    import jsonschema
    from ruamel.yaml import YAML

    from gpustack_gen.model.intent import fleet_json_schema

    example = YAML(typ="safe").load((EXAMPLE / "fleet.yaml").read_text(encoding="utf-8"))
    jsonschema.Draft7Validator(fleet_json_schema()).validate(example)
    assert example["defaults"]["delivery"]["wrap"] == ["argocd", "flux", "helmfile"]
