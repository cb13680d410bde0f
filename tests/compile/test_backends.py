"""Every registered backend carries every part its protocol names, in the model and in the compile layer:
a backend module that lacks one would fail only on the first cluster that uses it."""

from __future__ import annotations

import typing

import pytest

from gpustack_gen.compile.backends import BACKENDS, BackendCompilers
from gpustack_gen.model.backends import SEMANTICS, BackendSemantics
from gpustack_gen.model.intent import SharingPolicy


def _assert_has_every_part(name: str, module: object, protocol: type) -> None:
    assert name == getattr(module, "NAME", None)
    members = {member for member in vars(protocol) if not member.startswith("_")} | set(typing.get_type_hints(protocol))
    missing = {member for member in members if not hasattr(module, member)}
    assert not missing, f"backend {name} lacks {sorted(missing)}"


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_compilers_have_every_part(name: str) -> None:
    _assert_has_every_part(name, BACKENDS[name], BackendCompilers)


@pytest.mark.parametrize("name", sorted(SEMANTICS))
def test_semantics_have_every_part(name: str) -> None:
    semantics = SEMANTICS[name]
    _assert_has_every_part(name, semantics, BackendSemantics)
    options = set(SharingPolicy.model_json_schema(by_alias=True)["properties"]) - {"strategy"}
    assert options >= semantics.OPTIONS, "OPTIONS are the fleet's sharing keys"


def test_every_backend_has_both_halves() -> None:
    assert set(BACKENDS) == set(SEMANTICS)
