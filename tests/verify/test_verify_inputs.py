"""Bad input to ``verify`` exits 2 with one located line: malformed JSON, the wrong kind, an unknown cluster."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from verify_helpers import DATA, EXAMPLE, copy_state

from gpustack_gen.cli import main


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def verify_dir(folder: Path, *extra: str) -> tuple[int, str, str]:
    return run("verify", str(EXAMPLE), "--cluster", "prod", "--from", str(folder), *extra)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the state folder is "state", as the user names it


def errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "warning:" not in line]


def test_malformed_json_is_located(tmp_path: Path) -> None:
    folder = copy_state("prod-healthy", Path("state"))
    text = (folder / "nodes.json").read_text(encoding="utf-8")
    (folder / "nodes.json").write_text(text.replace('"kind": "Node",', '"kind": "Node"', 1), encoding="utf-8")
    code, out, err = verify_dir(folder)
    assert code == 2 and out == ""
    line = text[: text.index('"kind": "Node",')].count("\n") + 2
    assert errors(err) == [
        f"{folder.as_posix()}/nodes.json:{line}:13: invalid JSON: Expecting ',' delimiter (hint: write the file again "
        "with kubectl get ... -o json > FILE; it holds one JSON document)",
        "1 error; nothing was written.",
    ]


def test_the_wrong_list_is_located_at_its_item_and_says_where_it_belongs(tmp_path: Path) -> None:
    folder = copy_state("prod-healthy", Path("state"))
    (folder / "nodes.json").write_text((folder / "configmaps.json").read_text(encoding="utf-8"), encoding="utf-8")
    code, _, err = verify_dir(folder)
    assert code == 2
    first, second, summary = errors(err)
    assert first == (
        f"{folder.as_posix()}/nodes.json:4:1: items[0]: a ConfigMap (gpustack-device-plugin-config), not a Node "
        "(hint: it belongs in configmaps.json: kubectl --context prod get configmaps -n gpu-operator -o json > state/configmaps.json)"
    )
    assert (
        second.startswith(f"{folder.as_posix()}/nodes.json:") and "a ConfigMap (kube-root-ca.crt), not a Node" in second
    )
    assert summary == "2 errors; nothing was written."


def test_an_unknown_api_version_is_refused(tmp_path: Path) -> None:
    def edit(files: dict[str, object]) -> None:
        files["clusterpolicy.json"]["items"][0]["apiVersion"] = "nvidia.com/v2"  # type: ignore[index]

    code, _, err = verify_dir(copy_state("prod-healthy", Path("state"), edit))
    assert code == 2
    assert "items[0]: a ClusterPolicy of apiVersion nvidia.com/v2; gpustack-gen reads nvidia.com/v1" in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(
            '{"apiVersion": "v1", "kind": "NodeList", "items": [{"metadata": {}}]}',
            "items[0]: a Node without metadata.name",
            id="nameless",
        ),
        pytest.param("[1, 2]", "a list, not a Node", id="json-array"),
        pytest.param("apiVersion: v1\nkind: Node\nmetadata: {name: a\n", "invalid YAML", id="broken-yaml"),
        pytest.param(b"\xff\xfe{}", "not valid UTF-8", id="not-utf8"),
    ],
)
def test_unreadable_node_files(content: str | bytes, message: str, tmp_path: Path) -> None:
    folder = copy_state("prod-healthy", Path("state"))
    target = folder / "nodes.json"
    target.write_bytes(content if isinstance(content, bytes) else content.encode())
    code, _, err = verify_dir(folder)
    assert code == 2
    assert message in errors(err)[0] and errors(err)[0].startswith(f"{target.as_posix()}:")


def test_kubectl_yaml_output_reads_like_json(tmp_path: Path) -> None:
    from gpustack_gen.yamlio.writer import dump_yaml

    folder = copy_state("prod-seed", Path("state"))
    data = json.loads((folder / "nodes.json").read_text(encoding="utf-8"))
    (folder / "nodes.json").write_text(dump_yaml(data), encoding="utf-8")
    code, out, _ = verify_dir(folder)
    original_code, original, _ = verify_dir(DATA / "prod-seed")
    assert (code, out.split("\n", 1)[1]) == (original_code, original.split("\n", 1)[1])


def test_a_folder_without_state_files(tmp_path: Path) -> None:
    Path("empty").mkdir()
    code, _, err = verify_dir(Path("empty"))
    assert code == 2
    assert errors(err)[0].startswith(
        "empty: none of nodes.json, clusterpolicy.json, configmaps.json, operator.json, events.json is here (hint: kubectl --context prod get nodes -o json > empty/nodes.json && "
    )


def test_an_unknown_cluster_and_two_sources_are_usage_errors(tmp_path: Path) -> None:
    code, _, err = run("verify", str(EXAMPLE), "--cluster", "nope", "--from", str(tmp_path))
    assert code == 2 and "no cluster named 'nope' in" in err and "(clusters: prod, stage, train)" in err
    code, _, err = run("verify", str(EXAMPLE), "--cluster", "prod", "--from", str(tmp_path), "--context", "x")
    assert code == 2 and "--from reads files, --kubeconfig and --context read the API: give one or the other" in err
