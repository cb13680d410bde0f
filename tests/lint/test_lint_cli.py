"""``gpustack-gen lint`` end to end: exit codes, output formats, multi-document files, rendered examples."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from golden import assert_shown

from gpustack_gen.lint import default_options, detect, format_report, lint_files, lint_text
from gpustack_gen.versions.gpu_operator import get_operator_version

ROOT = Path(__file__).resolve().parents[2]
CASES = Path(__file__).parent / "cases"


def _run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpustack_gen", "lint", *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def test_exit_0_when_clean(tmp_path: Path) -> None:
    good = tmp_path / "config.yaml"
    good.write_text("version: v1\nflags:\n  migStrategy: none\n", encoding="utf-8")
    result = _run(str(good))
    assert result.returncode == 0
    assert result.stdout == "0 errors, 0 warnings in 1 file (1 document)\n"


def test_exit_0_with_only_warnings() -> None:
    result = _run(str(CASES / "values-mps-root.yaml"))
    assert result.returncode == 0
    assert "warning: devicePlugin.mps.root: dead value" in result.stdout


def test_exit_1_on_errors() -> None:
    result = _run(str(CASES / "dp-quoted-replicas.yaml"))
    assert result.returncode == 1
    first = result.stdout.splitlines()[0]
    assert first.startswith(f"{CASES / 'dp-quoted-replicas.yaml'}:6:7: sharing.timeSlicing.resources[0].replicas: ")


def test_exit_2_on_missing_file_but_other_files_are_still_linted(tmp_path: Path) -> None:
    result = _run(str(tmp_path / "nope.yaml"), str(CASES / "dp-quoted-replicas.yaml"))
    assert result.returncode == 2
    assert f"{tmp_path / 'nope.yaml'}: no such file" in result.stdout
    assert "replicas must not be quoted" in result.stdout


def test_exit_2_on_invalid_yaml_with_position(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: v1\nflags: [a, b\n", encoding="utf-8")
    result = _run(str(bad))
    assert result.returncode == 2
    assert result.stdout.startswith(f"{bad}:3:1: not valid YAML: ")


def test_exit_2_on_binary_file(tmp_path: Path) -> None:
    binary = tmp_path / "blob.yaml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    result = _run(str(binary))
    assert result.returncode == 2
    assert "not UTF-8 text" in result.stdout


def test_unknown_operator_version_is_a_usage_error() -> None:
    result = _run("--operator-version", "v1.2.3", str(CASES / "dp-quoted-replicas.yaml"))
    assert result.returncode == 2
    assert "unknown GPU Operator version 'v1.2.3'" in result.stderr


def test_json_format() -> None:
    result = _run("--format", "json", str(CASES / "multi-document.yaml"))
    assert result.returncode == 1
    payload = json.loads(result.stdout)
    assert payload["errors"] == 1 and payload["warnings"] == 1 and payload["exitCode"] == 1
    assert [d["kind"] for d in payload["documents"]] == [
        "device-plugin-configmap",
        "gpu-operator-values",
        "other-kubernetes-object",
        "unknown",
    ]
    error = payload["findings"][0]
    assert (error["line"], error["column"], error["severity"]) == (13, 11, "error")
    assert error["path"] == "data.shared.sharing.timeSlicing.resources[0].replicas"
    assert error["rule"] == "device-plugin-config"  # found in the ConfigMap's data, by the config's own rule
    assert [f["rule"] for f in payload["findings"]][1:] == ["unknown-document"]  # a document lint does not know


def test_json_findings_about_files_carry_rule_ids_too(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text("a: [\n", encoding="utf-8")
    (tmp_path / "empty.yaml").write_text("# nothing\n", encoding="utf-8")
    files = [str(tmp_path / name) for name in ("broken.yaml", "empty.yaml", "absent.yaml")]
    payload = json.loads(_run("--format", "json", *files).stdout)
    assert sorted(f["rule"] for f in payload["findings"]) == ["no-documents", "unreadable", "yaml"]


def test_github_format_escapes_and_levels() -> None:
    result = _run("--format", "github", str(CASES / "cm-metadata-typo.yaml"))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    file = str(CASES / "cm-metadata-typo.yaml").replace(":", "%3A").replace(",", "%2C")
    assert lines[0].startswith(f"::warning file={file},line=3,col=1,title=gpustack-gen lint [configmap]%3A metadata::")
    assert lines[1].startswith(
        f"::error file={file},line=5,col=3,title=gpustack-gen lint [configmap]%3A metadata.namepsace::"
    )
    assert "did you mean metadata.namespace?" in lines[1]
    assert len(lines) == 2  # no summary line: only annotations


def test_text_format_of_unreadable_report_counts_it() -> None:
    report = lint_files([CASES / "no-such-file.yaml"])
    assert report.exit_code == 2
    text = format_report(report, "text")
    assert text.endswith("1 error, 0 warnings in 1 file (0 documents); 1 file could not be read\n")
    with pytest.raises(ValueError, match="unknown output format"):
        format_report(report, "xml")


def test_multi_document_positions_are_per_document() -> None:
    text = (
        "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - {name: nvidia.com/gpu, replicas: 1}\n"
        "---\n"
        "version: v1\nmig-configs:\n  bad:\n  - devices: all\n    mig-enabled: true\n    mig-devices: {1g.10gb: 0}\n"
    )
    problems, documents, readable = lint_text(text, "two.yaml", default_options())
    assert readable
    assert [(d.index, d.line, d.kind) for d in documents] == [
        (0, 1, "device-plugin-config"),
        (1, 7, "mig-parted-config"),
    ]
    assert [(p.line, p.column, p.path) for p in problems] == [
        (5, 30, "sharing.timeSlicing.resources[0].replicas"),  # inside the flow mapping
        (12, 5, "mig-configs.bad[0].mig-devices"),
    ]


def test_empty_file_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing here\n", encoding="utf-8")
    report = lint_files([empty])
    assert report.exit_code == 0
    assert [p.message for p in report.warnings] == ["no YAML documents in the file"]


@pytest.mark.parametrize(
    ("document", "kind"),
    [
        ({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "version: v1\n"}}, "device-plugin-configmap"),
        (
            {"apiVersion": "v1", "kind": "ConfigMap", "data": {"config.yaml": "mig-configs: {}\n"}},
            "mig-parted-configmap",
        ),
        ({"apiVersion": "v1", "kind": "ConfigMap", "data": {"x": "hello"}}, "other-kubernetes-object"),
        ({"version": "v1", "flags": {}}, "device-plugin-config"),
        ({"version": "v1", "mig-configs": {}}, "mig-parted-config"),
        ({"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "spec": {}}, "clusterpolicy"),
        ({"spec": {"cdi": {"enabled": True}}}, "clusterpolicy-patch"),
        ({"operator": {}, "driver": {"enabled": True}, "nfd": {}}, "gpu-operator-values"),
        ({"resources": {}, "tolerations": []}, "workload-values"),
        ({"cluster": "prod", "pools": []}, "gpustack-gen-report"),
        ({"replicaCount": 2}, "unknown"),
        (["a", "list"], "unknown"),
    ],
)
def test_detect(document: object, kind: str) -> None:
    assert detect(document) == kind


def _rendered_clusters() -> list[Path]:
    return sorted(p for p in (ROOT / "examples" / "rendered").iterdir() if p.is_dir())


@pytest.mark.parametrize("cluster", _rendered_clusters(), ids=lambda p: p.name)
def test_rendered_examples_lint_clean(cluster: Path) -> None:
    files = sorted(cluster.rglob("*.yaml"))
    header = (cluster / "gpu-operator-values.yaml").read_text(encoding="utf-8")
    version = next(word for word in header.split() if word.startswith("v") and get_operator_version(word))
    report = lint_files(files, default_options(get_operator_version(version), kubernetes="1.29"))
    assert report.problems == ()
    assert report.exit_code == 0
    kinds = {d.kind for d in report.documents}
    assert {"gpu-operator-values", "clusterpolicy-patch", "workload-values"} <= kinds
    assert kinds & {"device-plugin-configmap", "mig-parted-configmap"}


def test_docs_lint_example_is_real_output() -> None:
    page = ROOT / "docs" / "lint-and-import.md"
    readme = page.read_text(encoding="utf-8")
    marker = "$ gpustack-gen lint time-slicing.yaml\n"
    shown = readme[readme.index(marker) + len(marker) :].split("```", 1)[0]
    result = _run("time-slicing.yaml", cwd=Path(__file__).parent / "readme")
    assert result.returncode == 1
    assert_shown(shown, result.stdout, page)
