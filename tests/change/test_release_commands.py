"""A backend chart's install command runs on a machine that never added its repository: the repository is added
in the same command, and an OCI chart, which Helm pulls by its URL, adds none."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack_gen import load_fleet
from gpustack_gen.change.commands import release_upgrade
from gpustack_gen.compile.backends import backend_of
from gpustack_gen.model.fleet import Cluster
from gpustack_gen.shell import all_of
from gpustack_gen.workdir import Paths

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"


def _example(backend: str, edit: tuple[str, str] = ("", "")) -> Cluster:
    text = (EXAMPLES / backend / "fleet.yaml").read_text(encoding="utf-8")
    assert edit[0] in text
    return load_fleet(text.replace(*edit), name="fleet.yaml").clusters[0]


@pytest.mark.parametrize(
    ("cluster", "oci"),
    [
        pytest.param(_example("hami"), False, id="hami"),
        pytest.param(_example("dra", ("version: 0.4.1", "version: 25.12.0")), False, id="dra-25.12.0"),
        pytest.param(_example("dra"), True, id="dra-0.4.1"),
    ],
)
def test_a_release_adds_its_repository_first_unless_its_chart_is_oci(cluster: Cluster, oci: bool) -> None:
    (release,) = backend_of(cluster).releases(cluster)
    command = release_upgrade(cluster, release, Paths())
    upgrade = release.upgrade_command(f"rendered/{cluster.name}/{release.values_file}")
    add = release.repo_add_command()
    assert release.oci is oci and (add is None) is oci
    assert command == (upgrade if add is None else all_of(add, upgrade))
