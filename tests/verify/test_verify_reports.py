"""The verify reports: one per format in VERIFY_REPORTS, the CLI's choices, and the documented JSON."""

from __future__ import annotations

import json
from pathlib import Path

from verify_helpers import verify

from gpustack_gen.cli import _VERIFY_FORMATS
from gpustack_gen.verify import report
from gpustack_gen.verify.report import VERIFY_REPORTS, ReportContext


def test_the_cli_offers_every_report() -> None:
    assert tuple(VERIFY_REPORTS) == _VERIFY_FORMATS


def test_json_is_versioned_and_every_key_is_documented(tmp_path: Path) -> None:
    result = verify("prod", "prod-seed", tmp_path / "state")
    data = json.loads(VERIFY_REPORTS["json"](result, ReportContext()))
    assert data["format"] == "gpustack-gen-verify/v1"
    assert (data["matches"], data["summary"]) == (False, {"errors": 5, "warnings": 0, "inProgress": 0})
    documented = report.__doc__ or ""
    keys = set(data) | set(data["pools"][0]) | set(data["findings"][0]) | set(data["skipped"] and data["skipped"][0])
    keys |= set(data["pools"][0]["nodeStatus"][0])
    assert sorted(key for key in keys if f'"{key}"' not in documented) == []
    assert [f["check"] for f in data["findings"]] == [
        "gpu-not-advertised",
        "capacity-mismatch",
        "clusterpolicy",
        "clusterpolicy",
        "operator-pods",
    ]


def test_each_format_names_every_finding(tmp_path: Path) -> None:
    result = verify("prod", "prod-seed", tmp_path / "state")
    github = VERIFY_REPORTS["github"](result, ReportContext(annotation_file="examples/fleet.yaml")).splitlines()
    assert [line.split("::")[1].split(" ", 1)[0] for line in github[:-1]] == ["error"] * 5
    assert github[0].startswith("::error file=examples/fleet.yaml,title=prod pool t4 gpu-t4-a%3A gpu-not-advertised::")
    markdown = VERIFY_REPORTS["markdown"](result, ReportContext())
    assert markdown.count("\n| error |") == 5
    assert "| t4 | tesla-t4 | time-slicing, 4 per GPU | 1/3 (3 intended) | nvidia.com/gpu 5/12 |" in markdown
    plain = VERIFY_REPORTS["text"](result, ReportContext())
    coloured = VERIFY_REPORTS["text"](result, ReportContext(color=True))
    assert "\x1b[" not in plain and "\x1b[" in coloured


def test_a_matching_cluster_in_every_format(tmp_path: Path) -> None:
    result = verify("train", "train-healthy", tmp_path / "state")
    assert (
        VERIFY_REPORTS["github"](result, ReportContext()).splitlines()[0].startswith("::notice title=train%3A verify::")
    )
    assert "### ✅ gpustack-gen verify: cluster `train`" in VERIFY_REPORTS["markdown"](result, ReportContext())
    assert json.loads(VERIFY_REPORTS["json"](result, ReportContext()))["matches"] is True
