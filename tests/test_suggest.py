"""One "did you mean" helper with one cutoff: case first, then the closest names, never an unrelated one."""

from __future__ import annotations

from pathlib import Path

from gpustack_gen.suggest import CUTOFF, closest, similarity, suggest

ROOT = Path(__file__).resolve().parent.parent


def test_same_letters_in_another_case_win() -> None:
    assert suggest("Tesla-T4", ["tesla-t4", "tesla-t40"]) == ["tesla-t4"]


def test_a_typo_finds_the_name_and_keeps_its_spelling() -> None:
    assert closest("nodepols", ["nodePools", "workloads"]) == "nodePools"
    assert suggest("migstrategy", ["migStrategy", "mig"]) == ["migStrategy"]


def test_unrelated_names_are_not_offered() -> None:
    assert closest("inference", ["t4", "a100"]) is None
    assert suggest("t5", ["t4", "a100"]) == []  # ratio 0.5: the hint lists the pools instead
    assert similarity("inference", "a100") < CUTOFF


def test_several_best_first() -> None:
    assert suggest("v25.3.4", ["v24.9.2", "v25.3.3", "v25.3.1", "v26.7.0"], n=2) == ["v25.3.3", "v25.3.1"]


def test_no_other_module_ranks_names_itself() -> None:
    users = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "gpustack_gen").rglob("*.py")
        if "import difflib" in path.read_text(encoding="utf-8")
    ]
    assert users == ["gpustack_gen/suggest.py"]
