"""Node-group fragments: each provider's file per pool (goldens), the labels each backend asks for, the
path a plan names, the bug guards of the validate layer, and conformance with the upstream CRDs and schemas."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from golden import assert_golden
from jsonschema import Draft7Validator  # type: ignore[import-untyped]
from ruamel.yaml import YAML
from test_gitops import strict_json_schema

from gpustack_gen import load_fleet, render
from gpustack_gen.compile.artifact import NODE_GROUP_KINDS, kind_of_file
from gpustack_gen.compile.node_groups import PROVIDERS, node_group_file
from gpustack_gen.validate.node_groups import check_node_group_document

GOLDEN = Path(__file__).resolve().parent / "golden" / "node-groups"
T4_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def _fleet(provider: str) -> dict[str, Any]:
    """The write-up's T4 pool and a MIG pool on the GPU Operator, a HAMi and a DRA cluster, on ``provider``."""
    t4 = {
        "name": "t4",
        "gpu": "tesla-t4",
        "nodes": 3,
        "nodeSelector": {"node.kubernetes.io/instance-type": "g4dn.xlarge"},
        "taints": [T4_TAINT],
        "sharing": {"strategy": "time-slicing", "replicas": 4},
    }
    a100 = {
        "name": "a100",
        "gpu": "a100-40gb",
        "nodes": 2,
        "gpusPerNode": 8,
        "nodeSelector": {"pool": "a100"},
        "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
        "sharing": {"strategy": "mig", "layout": {"3g.20gb": 2}},
    }
    hami = {
        "name": "t4",
        "gpu": "tesla-t4",
        "nodes": 2,
        "nodeSelector": {"pool": "t4"},
        "sharing": {"strategy": "hami", "split": 4},
    }
    return {
        "apiVersion": "gpustack-gen/v1alpha1",
        "kind": "Fleet",
        "defaults": {"operator": {"version": "v26.7.0"}, "nodeGroups": {"provider": provider}},
        "clusters": [
            {"name": "prod", "kubernetes": "1.29.15", "nodePools": [t4, a100]},
            {"name": "edge", "kubernetes": "1.30.2", "backend": "hami", "nodePools": [hami]},
            {"name": "lab", "kubernetes": "1.34.2", "backend": "dra", "nodePools": [copy.deepcopy(a100)]},
        ],
    }


def _files(provider: str) -> dict[str, Any]:
    bundle = render(load_fleet(_fleet(provider), name="fleet.yaml"))
    return {path: file for path, file in bundle.items() if "/node-groups/" in path}


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_each_provider_matches_its_golden(provider: str) -> None:
    files = _files(provider)
    assert sorted(files) == [
        f"edge/node-groups/t4.{provider}.yaml",
        f"lab/node-groups/a100.{provider}.yaml",
        f"prod/node-groups/a100.{provider}.yaml",
        f"prod/node-groups/t4.{provider}.yaml",
    ]
    text = "".join(f"# ==> {path}\n{files[path].text}" for path in sorted(files))
    assert_golden(text, GOLDEN / f"{provider}.yaml")


def _karpenter_labels(path: str) -> dict[str, str]:
    labels: dict[str, str] = _files("karpenter")[path].documents[0]["spec"]["template"]["metadata"]["labels"]
    return labels


def test_the_labels_are_the_backends_and_the_selectors() -> None:
    assert _karpenter_labels("prod/node-groups/t4.karpenter.yaml") == {"nvidia.com/device-plugin.config": "t4"}
    assert _karpenter_labels("prod/node-groups/a100.karpenter.yaml") == {
        "pool": "a100",
        "nvidia.com/device-plugin.config": "a100",
        "nvidia.com/mig.config": "custom-3g.20gbx2",
    }
    assert _karpenter_labels("edge/node-groups/t4.karpenter.yaml") == {"pool": "t4", "gpu": "on"}
    lab = _karpenter_labels("lab/node-groups/a100.karpenter.yaml")
    assert lab["nvidia.com/gpu.deploy.device-plugin"] == "false" and lab["pool"] == "a100"


def test_labels_the_provider_sets_are_left_to_it() -> None:
    """The instance type comes from the node group, not its labels: Karpenter's requirements must allow it."""
    file = _files("karpenter")["prod/node-groups/t4.karpenter.yaml"]
    assert "node.kubernetes.io/instance-type" not in file.text.split("apiVersion:")[1]
    assert "Its requirements must allow node.kubernetes.io/instance-type In [g4dn.xlarge]" in file.text
    gke = _files("gke")["prod/node-groups/t4.gke.yaml"].documents[0]
    assert gke["node_config"]["labels"]["gke-no-default-nvidia-gpu-device-plugin"] == "true"


def test_a_selector_on_the_nodepool_label_names_the_nodepool() -> None:
    data = _fleet("karpenter")
    data["clusters"][0]["nodePools"][0]["nodeSelector"] = {"karpenter.sh/nodepool": "gpu-t4"}
    bundle = render(load_fleet(data), ["prod"])
    document = bundle["prod/node-groups/t4.karpenter.yaml"].documents[0]
    assert document["metadata"]["name"] == "gpu-t4"
    assert "karpenter.sh/nodepool" not in document["spec"]["template"]["metadata"]["labels"]


def test_taints_in_each_format() -> None:
    taints = {
        "karpenter": _files("karpenter")["prod/node-groups/t4.karpenter.yaml"].documents[0]["spec"]["template"]["spec"][
            "taints"
        ],
        "eksctl": _files("eksctl")["prod/node-groups/t4.eksctl.yaml"].documents[0]["managedNodeGroups"][0]["taints"],
        "gke": _files("gke")["prod/node-groups/t4.gke.yaml"].documents[0]["node_config"]["taint"],
        "aks": _files("aks")["prod/node-groups/t4.aks.yaml"].documents[0]["properties"]["nodeTaints"],
        "cluster-api": _files("cluster-api")["prod/node-groups/t4.cluster-api.yaml"].documents[0]["spec"]["template"][
            "spec"
        ]["taints"],
    }
    assert taints == {
        "karpenter": [T4_TAINT],
        "eksctl": [T4_TAINT],
        "gke": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}],
        "aks": ["nvidia.com/gpu=present:NoSchedule"],
        "cluster-api": [{**T4_TAINT, "propagation": "Always"}],
    }


def test_each_header_says_what_a_change_does_to_running_nodes() -> None:
    said = {
        "karpenter": "drifts every node",
        "eksctl": "changes its labels in place",
        "gke": "updates the pool in place",
        "aks": "node-pool update through the AKS API",
        "cluster-api": "updates the Machines in place",
    }
    for provider, words in said.items():
        assert words in _files(provider)[f"prod/node-groups/t4.{provider}.yaml"].text, provider


def test_the_node_group_file_of_a_pool() -> None:
    fleet = load_fleet(_fleet("eksctl"))
    prod = fleet.clusters[0]
    assert node_group_file(prod, prod.pools[0]) == "node-groups/t4.eksctl.yaml"
    assert f"prod/{node_group_file(prod, prod.pools[0])}" in render(fleet, ["prod"])
    data = _fleet("eksctl")
    del data["defaults"]["nodeGroups"]
    plain = load_fleet(data).clusters[0]
    assert node_group_file(plain, plain.pools[0]) is None
    assert not [p for p in render(load_fleet(data), ["prod"]) if "node-groups" in p]


def test_readers_of_a_rendered_folder_know_the_kinds() -> None:
    for provider, kind in NODE_GROUP_KINDS.items():
        assert kind_of_file(f"node-groups/t4.{provider}.yaml") == kind
    assert kind_of_file("node-groups/t4.nomad.yaml") == "unknown"


@pytest.mark.parametrize(
    ("kind", "document", "path"),
    [
        (
            "karpenter-nodepool",
            {"spec": {"template": {"metadata": {"labels": {"karpenter.sh/nodepool": "x"}}}}},
            "spec.template.metadata.labels.karpenter.sh/nodepool",
        ),
        (
            "karpenter-nodepool",
            {
                "spec": {
                    "template": {
                        "metadata": {"labels": {}},
                        "spec": {"taints": [{"key": "k", "effect": "NO_SCHEDULE"}]},
                    }
                }
            },
            "spec.template.spec.taints[0].effect",
        ),
        (
            "eksctl-nodegroup",
            {"managedNodeGroups": [{"labels": {"node.kubernetes.io/instance-type": "g4dn.xlarge"}}]},
            "managedNodeGroups[0].labels.node.kubernetes.io/instance-type",
        ),
        ("gke-node-pool", {"node_config": {"labels": {"a": "Tesla T4"}}}, "node_config.labels.a"),
        ("aks-node-pool", {"properties": {"nodeLabels": {}, "nodeTaints": ["k=v"]}}, "properties.nodeTaints[0]"),
        (
            "cluster-api-machinedeployment",
            {
                "spec": {
                    "template": {"metadata": {"labels": {}}, "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}}
                }
            },
            "spec.template.spec.taints[0].propagation",
        ),
    ],
)
def test_the_validate_layer_refuses_what_the_provider_refuses(kind: str, document: dict[str, Any], path: str) -> None:
    (finding,) = check_node_group_document(kind, document)
    assert finding.path == path


# --- conformance with the upstream CRDs and schemas ---------------------------------------------------------

# What the user's own object holds and the fragment leaves to it (the required fields).
USER_OBJECTS: Mapping[str, dict[str, Any]] = {
    "karpenter": {
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
                    "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}],
                }
            }
        }
    },
    "eksctl": {"metadata": {"region": "eu-west-1"}},
    "cluster-api": {
        "metadata": {"namespace": "default"},
        "spec": {
            "clusterName": "prod",
            "selector": {"matchLabels": {"cluster.x-k8s.io/deployment-name": "gpu"}},
            "template": {
                "spec": {
                    "clusterName": "prod",
                    "bootstrap": {
                        "configRef": {
                            "apiGroup": "bootstrap.cluster.x-k8s.io",
                            "kind": "KubeadmConfigTemplate",
                            "name": "gpu",
                        }
                    },
                    "infrastructureRef": {
                        "apiGroup": "infrastructure.cluster.x-k8s.io",
                        "kind": "AWSMachineTemplate",
                        "name": "gpu",
                    },
                }
            },
        },
    },
}


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch, as kustomize applies a patch to a custom resource: maps merge, lists replace."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        result[key] = merge_patch(result.get(key), value)
    return result


def _crd_validators(path: Path, version: str) -> Draft7Validator:
    crd = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    (served,) = [v for v in crd["spec"]["versions"] if v["name"] == version and v.get("served")]
    return Draft7Validator(strict_json_schema(served["schema"]["openAPIV3Schema"]))


@pytest.fixture(scope="module")
def upstream_validators(upstream: Path) -> dict[str, list[Draft7Validator]]:
    folder = upstream / "node-groups"
    eksctl = YAML(typ="safe").load((folder / "eksctl-v0.230.0-v1alpha5-schema.json").read_text(encoding="utf-8"))
    return {
        "karpenter": [
            _crd_validators(folder / "karpenter-v1.14.1-karpenter.sh_nodepools.yaml", "v1"),
            _crd_validators(folder / "karpenter-provider-aws-v1.14.1-karpenter.sh_nodepools.yaml", "v1"),
        ],
        "eksctl": [Draft7Validator(eksctl)],
        "cluster-api": [
            _crd_validators(folder / "cluster-api-v1.14.0-cluster.x-k8s.io_machinedeployments.yaml", "v1beta2")
        ],
    }


@pytest.mark.parametrize("provider", ["karpenter", "eksctl", "cluster-api"])
def test_fragments_merged_over_the_users_object_conform(
    provider: str, upstream_validators: dict[str, list[Draft7Validator]]
) -> None:
    checked = 0
    for path, file in _files(provider).items():
        (document,) = YAML(typ="safe").load_all(file.text)  # the written text, not the data
        merged = merge_patch(USER_OBJECTS[provider], document)
        for validator in upstream_validators[provider]:
            errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(merged)]
            assert not errors, f"{path}: {errors[:3]}"
            checked += 1
    assert checked >= 4


def test_the_conformance_check_refuses_a_wrong_fragment(upstream_validators: dict[str, list[Draft7Validator]]) -> None:
    """Without this, a permissive conversion would let the conformance test pass on anything."""
    document = copy.deepcopy(_files("karpenter")["prod/node-groups/t4.karpenter.yaml"].documents[0])
    document["spec"]["template"]["spec"]["taints"][0]["effect"] = "NO_SCHEDULE"
    merged = merge_patch(USER_OBJECTS["karpenter"], document)
    assert all(not v.is_valid(merged) for v in upstream_validators["karpenter"])
    document["spec"]["template"]["spec"]["taints"][0]["effect"] = "NoSchedule"
    document["spec"]["template"]["metadata"]["lables"] = {}
    assert all(
        not v.is_valid(merge_patch(USER_OBJECTS["karpenter"], document)) for v in upstream_validators["karpenter"]
    )
