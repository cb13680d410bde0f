"""The fleet schema's backend and strategy names are the model registry's: registering a backend is enough."""

import pytest
from pydantic import ValidationError

from gpustack_gen.model import intent
from gpustack_gen.model.backends import SEMANTICS
from gpustack_gen.model.fleet import ISOLATION


def _property(model: str, name: str) -> dict[str, object]:
    definitions = intent.fleet_json_schema()["definitions"]
    return definitions[model]["properties"][name]


def test_the_backend_enum_is_the_registry() -> None:
    backend = _property("ClusterSettings", "backend")
    assert backend["enum"] == list(SEMANTICS)
    assert all(f"{name} (" in str(backend["description"]) for name in SEMANTICS)


def test_the_strategy_enum_is_the_device_plugins_and_every_backends_own() -> None:
    strategy = _property("SharingPolicy", "strategy")
    offered = {name for backend in SEMANTICS.values() for name in backend.STRATEGIES}
    assert strategy["enum"][: len(ISOLATION)] == list(ISOLATION)
    assert set(strategy["enum"]) == offered
    own = offered - ISOLATION.keys()
    assert all(f"{name} (" in str(strategy["description"]) for name in own)


def test_a_backend_outside_the_registry_is_refused() -> None:
    fleet = {"apiVersion": "gpustack-gen/v1alpha1", "kind": "Fleet", "defaults": {"backend": "x"}, "clusters": []}
    with pytest.raises(ValidationError) as caught:
        intent.FleetSpec.model_validate(fleet)
    (error,) = [e for e in caught.value.errors() if e["loc"] == ("defaults", "backend")]
    assert error["type"] == "literal_error"
    assert error["ctx"]["expected"] == " or ".join(
        [", ".join(repr(n) for n in list(SEMANTICS)[:-1]), repr(list(SEMANTICS)[-1])]
    )
