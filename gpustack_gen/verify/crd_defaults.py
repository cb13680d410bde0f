"""What the API server stores where a rendered ClusterPolicy patch deletes a field: the CRD's default, per version.

A merge patch's ``null`` removes the field, and a chart that renders an empty value sends a YAML null; the API
server then fills in the structural default of the CRD again (``kubernetes/apiextensions-apiserver@v0.34.0
pkg/apiserver/schema/defaulting/algorithm.go:34-47``; nulls without a default are pruned, ``prunenulls.go``). So on
a cluster that is exactly as rendered, ``migManager.config.name`` holds ``default-mig-parted-config`` up to
v25.10.x, never nothing. A field the patch sets to a value keeps that value: only the deleted ones need a default.

:data:`DEFAULTS` is derived from each version's ClusterPolicy CRD
(``deployments/gpu-operator/crds/nvidia.com_clusterpolicies.yaml``) by
``tests/conformance/test_clusterpolicy_defaults.py``, which checks it against the CRDs and rewrites it under
``UPDATE_GOLDEN=1``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..versions.gpu_operator import OperatorVersion

# The fields a rendered patch may delete (a test holds every rendered patch to this list).
DELETED_PATHS = ("devicePlugin.config", "migManager.config.name")

# Operator version -> deleted field -> its CRD default (a field without a default is not listed).
# Generated from the CRDs: do not edit by hand.
DEFAULTS: Mapping[str, Mapping[str, Any]] = {
    "v23.9.2": {"migManager.config.name": "default-mig-parted-config"},
    "v24.3.0": {"migManager.config.name": "default-mig-parted-config"},
    "v24.6.2": {"migManager.config.name": "default-mig-parted-config"},
    "v24.9.2": {"migManager.config.name": "default-mig-parted-config"},
    "v25.3.0": {"migManager.config.name": "default-mig-parted-config"},
    "v25.3.3": {"migManager.config.name": "default-mig-parted-config"},
    "v26.7.0": {},
}

# Versions whose CRD was not read, and the version whose CRD has the same defaults at DELETED_PATHS: v25.3.4 is a
# patch release of v25.3.3 (unverified); v25.10.1's CRD defaults the name (NVIDIA/gpu-operator@v25.10.1
# deployments/gpu-operator/crds/nvidia.com_clusterpolicies.yaml:1402); v26.3.0's has no such default, and v26.3.3's
# is taken to match it (unverified).
STAND_INS: Mapping[str, str] = {"v25.3.4": "v25.3.3", "v25.10.1": "v25.3.3", "v26.3.3": "v26.7.0"}


def stored_defaults(release: OperatorVersion) -> Mapping[str, Any]:
    """Deleted field -> what the API server puts there instead, for ``release``'s CRD."""
    return DEFAULTS[STAND_INS.get(release.version, release.version)]


def as_stored(patch: Mapping[str, Any], release: OperatorVersion) -> dict[str, Any]:
    """The patch's ``spec`` with each deleted field (``null``) replaced by what the API server stores there: the
    CRD's default, or still ``null`` (absent) where the CRD has none."""
    defaults = stored_defaults(release)

    def fill(data: Mapping[str, Any], prefix: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in data.items():
            path = f"{prefix}.{key}" if prefix else key
            if isinstance(value, Mapping) and value:
                out[key] = fill(value, path)
            else:
                out[key] = defaults.get(path) if value is None else value
        return out

    return fill(patch, "")
