"""The ``verify --from`` file formats page (``docs/reference/verify-inputs.md``), generated from the parts
``verify`` reads (``gpustack_gen.verify.state_parts``) for each backend's example cluster, with an excerpt of
one file of the healthy prod state that the tests verify against."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpustack_gen import load_fleet
from gpustack_gen.shell import text_in
from gpustack_gen.verify import state_parts

EXAMPLES = (  # (backend, fleet file, cluster)
    ("gpu-operator", "examples/fleet.yaml", "prod"),
    ("hami", "examples/hami/fleet.yaml", "stage"),
    ("dra", "examples/dra/fleet.yaml", "train"),
    ("device-plugin", "examples/device-plugin/fleet.yaml", "lab"),
)
EXCERPT = "tests/verify/data/prod-healthy/nodes.json"
_NODE_KEYS = (
    "nvidia.com/device-plugin.config",
    "nvidia.com/gpu.product",
    "nvidia.com/gpu.count",
    "nvidia.com/gpu.replicas",
)

INTRO = """# verify --from files

<!-- Generated from gpustack_gen/verify/state.py: run the tests with UPDATE_GOLDEN=1 to regenerate. -->

`gpustack-gen verify FLEET --cluster NAME --from DIR` reads the cluster from files instead of the API, for a
cluster you cannot reach from where you run it. Each file is what `kubectl get ... -o json` writes: a `List`
(or a single object) of the kinds below, in any API version the cluster serves (`resource.k8s.io` `v1beta1`,
`v1beta2` and `v1` read alike). YAML (`-o yaml`) is read as well. Every file is optional, but one must be there:
a missing one skips the checks that need it, and the report says which. An object of another kind, or a file that is not JSON or
YAML, is an error at its line (exit 2).

Run the commands in the folder you pass to `--from`. The files every cluster has come first, then those its
backend reads, then one per Helm release the backend installs (its DaemonSets, Deployments and pods, by the
release label `app.kubernetes.io/instance`). A backend that installs no GPU Operator (the standalone device
plugin) has no `clusterpolicy.json` or `operator.json`, and a file of its own stands in for a common one of the
same part (the chart's ConfigMap and workloads, by the chart's label in every namespace).
"""


def render_verify_inputs(root: Path) -> str:
    sections = [INTRO]
    for backend, fleet_file, cluster_name in EXAMPLES:
        fleet = load_fleet(root / fleet_file, name=fleet_file)
        (cluster,) = (cluster for cluster in fleet.clusters if cluster.name == cluster_name)
        lines = [f"## backend: {backend}", "", f"For cluster `{cluster_name}` of `{fleet_file}`:", ""]
        lines += ["| file | kinds | where | command |", "|---|---|---|---|"]
        for part in state_parts(cluster):
            where = part.namespace or ("every namespace" if part.all_namespaces else "cluster-wide")
            if part.selector:
                where += f", `-l {part.selector}`"
            command = text_in(cluster.kube_context, part.command_into(Path("."))).replace("|", "\\|")
            lines.append(f"| `{part.file}` | {', '.join(part.kinds)} | {where} | `{command}` |")
        sections.append("\n".join(lines) + "\n")
    sections.append(_excerpt(root))
    return "\n".join(sections)


def _excerpt(root: Path) -> str:
    document = json.loads((root / EXCERPT).read_text(encoding="utf-8"))
    node: dict[str, Any] = document["items"][0]
    labels = node["metadata"]["labels"]
    shown = {
        "apiVersion": document["apiVersion"],
        "kind": document["kind"],
        "items": [
            {
                "apiVersion": node["apiVersion"],
                "kind": node["kind"],
                "metadata": {
                    "name": node["metadata"]["name"],
                    "labels": {key: labels[key] for key in _NODE_KEYS if key in labels},
                },
                "status": {"allocatable": node["status"]["allocatable"], "capacity": node["status"]["capacity"]},
            },
            "...",
        ],
    }
    return (
        "## An example\n\n"
        f"The first node of `{EXCERPT}`, the healthy prod state the tests verify (labels and fields that"
        " `verify` does not read left out):\n\n"
        "```json\n" + json.dumps(shown, indent=2) + "\n```\n\n"
        "`gpustack-gen verify examples/fleet.yaml --cluster prod --from tests/verify/data/prod-healthy` reads that"
        " folder: its output is in [Getting started](../getting-started.md#check-the-running-cluster).\n"
    )
