"""Version parsing and the one wording of an unknown GPU Operator version, whichever command meets it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gpustack_gen.cli import main
from gpustack_gen.versions import leading_version, parse_version
from gpustack_gen.versions.gpu_operator import UnknownOperatorVersion

KNOWN = "known: v23.9.2, v24.3.0, v24.6.2, v24.9.2, v25.3.0, v25.3.3, v25.3.4, v25.10.1, v26.3.3, v26.7.0"
FLEET = """\
apiVersion: gpustack-gen/v1alpha1
kind: Fleet
clusters:
  - name: prod
    kubernetes: "1.29.15"
    operator: {version: v25.3.2}
    nodePools:
      - {name: t4, gpu: tesla-t4, nodes: 1, nodeSelector: {pool: t4}}
"""


@pytest.mark.parametrize(
    ("text", "parsed", "leading"),
    [
        ("v25.3.3", (25, 3, 3), (25, 3, 3)),
        ("25.3.3", (25, 3, 3), (25, 3, 3)),
        ("v0.17.0-ubi8", None, (0, 17, 0)),
        ("v0.12.3-ubuntu20.04", None, (0, 12, 3)),
        ("v1.30.8-eks-2f008fe", None, (1, 30, 8)),
        ("v25.3", None, None),
        ("latest", None, None),
    ],
)
def test_versions_and_the_versions_image_tags_start_with(
    text: str, parsed: tuple[int, int, int] | None, leading: tuple[int, int, int] | None
) -> None:
    assert (parse_version(text), leading_version(text)) == (parsed, leading)


def test_the_hint_suggests_the_closest_known_versions() -> None:
    assert UnknownOperatorVersion("v25.3.2").hint == "did you mean v25.3.4 or v25.3.3?"
    assert UnknownOperatorVersion("banana").hint == "`gpustack-gen versions` lists them"


@pytest.mark.parametrize(
    "args",
    [
        ["validate", "fleet.yaml"],
        ["init", "--out", "-", "--operator-version", "v25.3.2"],
        ["lint", "values.yaml", "--operator-version", "v25.3.2"],
        ["schema", "--kind", "gpu-operator-values", "--operator-version", "v25.3.2"],
        ["import", "--cluster", "c", "--operator-version", "v25.3.2", "--nodes", "nodes.yaml"],
    ],
)
def test_every_command_words_an_unknown_operator_version_alike(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fleet.yaml").write_text(FLEET, encoding="utf-8")
    (tmp_path / "values.yaml").write_text("cdi: {enabled: true}\n", encoding="utf-8")
    nodes = Path(__file__).parent / "importer" / "data" / "nodes.yaml"
    (tmp_path / "nodes.yaml").write_text(nodes.read_text(encoding="utf-8"), encoding="utf-8")
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert f"unknown GPU Operator version 'v25.3.2'; {KNOWN}" in result.stderr
    assert "did you mean v25.3.4 or v25.3.3?" in result.stderr


@pytest.mark.parametrize(("spelling", "found"), [("{}", True), ("v{}", True), (" {} ", True), ("{}.0", False)])
def test_backend_chart_versions_are_read_one_way(spelling: str, found: bool) -> None:
    """HAMi's and the DRA driver's chart tables take the same spellings of a version, and refuse the same."""
    from gpustack_gen.versions.dra import NEWEST_DRA, UnknownDraVersion, require_dra_version
    from gpustack_gen.versions.hami import NEWEST_HAMI, UnknownHamiVersion, require_hami_version

    for require, newest, unknown in (
        (require_hami_version, NEWEST_HAMI, UnknownHamiVersion),
        (require_dra_version, NEWEST_DRA, UnknownDraVersion),
    ):
        text = spelling.format(newest.version)
        if found:
            assert require(text) is newest, text
        else:
            with pytest.raises(unknown):
                require(text)


def test_an_unknown_dra_version_far_from_any_names_the_newest() -> None:
    from gpustack_gen.versions.dra import NEWEST_DRA, UnknownDraVersion, require_dra_version

    with pytest.raises(UnknownDraVersion) as caught:
        require_dra_version("latest")
    assert caught.value.hint == f"write the chart version without a v, e.g. {NEWEST_DRA.version}"
    assert "unknown DRA driver chart version 'latest'" in str(caught.value)
