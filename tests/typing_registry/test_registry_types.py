"""The registries are typed so that mypy checks every module against its protocol: a backend module with a
wrong signature fails ``mypy --strict`` at its registry row, while the real backend beside it passes."""

from __future__ import annotations

from pathlib import Path

from mypy import api

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


STUBS = ("broken_backend", "broken_semantics", "broken_verify_backend", "broken_rule")
# What mypy expects and what each stub has, of the one member it gets wrong: model, verify and change registries.
CONFLICTS = (
    (
        "def resolve_sharing(strategy: str, options: Mapping[str, Any]) -> SharingOptions",
        "def resolve_sharing(strategy: str) -> SharingOptions",
    ),
    (
        "def daemonsets(cluster: Cluster) -> tuple[str, ...]",
        "def daemonsets(cluster: Cluster, pool: Pool) -> tuple[str, ...]",
    ),
    ("def outcomes(change: ClusterChange) -> Iterator[Outcome]", "def outcomes(change: ClusterChange) -> list[str]"),
)


def test_mypy_strict_refuses_a_backend_with_a_wrong_signature() -> None:
    stdout, stderr, status = api.run(
        [
            "--strict",
            "--no-error-summary",
            "--show-absolute-path",
            "--follow-imports=silent",
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            *(str(HERE / f"{name}.py") for name in STUBS),
            str(HERE / "registry.py"),
        ]
    )
    assert status == 1, stdout + stderr
    lines = (HERE / "registry.py").read_text(encoding="utf-8").splitlines()
    refused = {n for n, line in enumerate(lines, 1) if line.endswith(("# refused", "conflicts"))}
    errors = {int(line.split(":")[1]) for line in stdout.splitlines() if ": error: " in line}
    assert errors == refused, stdout  # the real gpu_operator row passes
    assert "def operator_values(cluster: Cluster) -> dict[str, Any]" in stdout, stdout  # expected
    assert "def operator_values(cluster: Cluster, pool: Pool) -> dict[str, Any]" in stdout, stdout  # got
    for expected, got in CONFLICTS:
        assert expected in stdout and got in stdout, stdout


REGISTRIES = (
    "gpustack_gen/compile/backends/__init__.py",
    "gpustack_gen/compile/node_groups/__init__.py",
    "gpustack_gen/model/backends/__init__.py",
    "gpustack_gen/verify/backends/__init__.py",
    "gpustack_gen/verify/checks/__init__.py",
    "gpustack_gen/change/rules/__init__.py",
    "gpustack_gen/lint/rules/__init__.py",
)


def test_the_registries_type_their_modules_as_the_protocol_without_cast() -> None:
    """The pattern above is the one the real registries use: no cast() switches mypy's check off."""
    for path in REGISTRIES:
        source = (ROOT / path).read_text(encoding="utf-8")
        assert "cast(" not in source, path
        assert "mypy checks its names and signatures" in source, path
