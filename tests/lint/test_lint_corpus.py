"""The lint corpus: hand-written broken configs from the user pain points, each with its exact findings.

One row per file in ``cases/``: the GPU Operator version to lint for (None: newest known) and every
finding as (line, column, severity, path, message). Hints are checked separately where they carry the fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from gpustack_gen.lint import LintReport, default_options, lint_files
from gpustack_gen.versions.gpu_operator import get_operator_version

CASES_DIR = Path(__file__).parent / "cases"

Expected = tuple[int, int, str, str, str]


@dataclass(frozen=True)
class Case:
    file: str
    operator_version: str | None
    findings: list[Expected]


CASES: list[Case] = [
    Case(
        "clusterpolicy-helm-keys.yaml",
        None,
        [
            (9, 7, "error", "spec.devicePlugin.config.create", "unknown key 'create'"),
            (
                13,
                7,
                "error",
                "spec.migManager.config.default",
                "expected one of 'all-disabled', '', got 'all-balanced'",
            ),
        ],
    ),
    Case(
        "clusterpolicy-nri-old.yaml",
        "v25.3.3",
        [
            (9, 5, "error", "spec.cdi.nriPluginEnabled", "not in GPU Operator v25.3.3 (added in v26.3.0)"),
        ],
    ),
    Case(
        "cm-data-mapping.yaml",
        None,
        [
            (9, 3, "error", "data.shared", "expected a string or null, got a mapping"),
        ],
    ),
    Case(
        "cm-invalid-key.yaml",
        None,
        [
            (7, 3, "error", "data.time_slicing-", "key 'time_slicing-' is not a valid label value"),
        ],
    ),
    Case(
        "cm-metadata-typo.yaml",
        None,
        [
            (
                3,
                1,
                "warning",
                "metadata",
                "no metadata.namespace: kubectl puts the ConfigMap in the current namespace, and the GPU Operator reads it only from 'gpu-operator'",
            ),
            (5, 3, "error", "metadata.namepsace", "unknown key 'namepsace' (did you mean metadata.namespace?)"),
        ],
    ),
    Case(
        "cm-no-namespace.yaml",
        None,
        [
            (
                3,
                1,
                "warning",
                "metadata",
                "no metadata.namespace: kubectl puts the ConfigMap in the current namespace, and the GPU Operator reads it only from 'gpu-operator'",
            ),
        ],
    ),
    Case(
        "cm-wrong-namespace.yaml",
        None,
        [
            (
                6,
                3,
                "error",
                "metadata.namespace",
                "ConfigMap in namespace 'kube-system': the GPU Operator only reads ConfigMaps from its own namespace 'gpu-operator', and the plugin pods wait for a missing one (gpu-operator#412)",
            ),
        ],
    ),
    Case(
        "dp-flags-failRequests.yaml",
        None,
        [
            (
                3,
                3,
                "error",
                "flags.failRequestsGreaterThanOne",
                "unknown key 'failRequestsGreaterThanOne' (did you mean sharing.timeSlicing.failRequestsGreaterThanOne?)",
            ),
        ],
    ),
    Case(
        "dp-flags-renameByDefault.yaml",
        None,
        [
            (
                5,
                3,
                "error",
                "flags.renameByDefault",
                "unknown key 'renameByDefault' (did you mean sharing.timeSlicing.renameByDefault?)",
            ),
        ],
    ),
    Case(
        "dp-key-case.yaml",
        None,
        [
            (4, 3, "error", "flags.migstrategy", "unknown key 'migstrategy' (did you mean flags.migStrategy?)"),
        ],
    ),
    Case(
        "dp-mig-wildcard.yaml",
        None,
        [
            (
                7,
                7,
                "error",
                "sharing.timeSlicing.resources[0].name",
                "expected an optional 'nvidia.com/' prefix followed by a lowercase DNS-1123 subdomain (no wildcards, no other prefix), at most 63 characters including the prefix, got 'nvidia.com/mig-*'",
            ),
        ],
    ),
    Case(
        "dp-migstrategy-case.yaml",
        None,
        [
            (3, 3, "error", "flags.migStrategy", "expected one of 'none', 'single', 'mixed', got 'Mixed'"),
        ],
    ),
    Case(
        "dp-mps-mixed.yaml",
        None,
        [
            (
                3,
                3,
                "error",
                "flags.migStrategy",
                "migStrategy 'mixed' is not supported with MPS sharing (upstream: using --mig-strategy=mixed is not supported with MPS)",
            ),
        ],
    ),
    Case(
        "dp-mps-old-operator.yaml",
        "v23.9.2",
        [
            (4, 3, "error", "sharing.mps", "not supported by device plugin v0.14.5 (added in v0.15.0)"),
        ],
    ),
    Case(
        "dp-quoted-replicas.yaml",
        None,
        [
            (
                6,
                7,
                "error",
                "sharing.timeSlicing.resources[0].replicas",
                "replicas must not be quoted: expected an integer >= 2, got '4' (a string)",
            ),
        ],
    ),
    Case(
        "dp-rename-true.yaml",
        None,
        [
            (
                5,
                5,
                "warning",
                "sharing.timeSlicing.renameByDefault",
                "renames the shared resources to nvidia.com/gpu.shared: workloads must request nvidia.com/gpu.shared, not nvidia.com/gpu",
            ),
            (
                6,
                5,
                "warning",
                "sharing.timeSlicing.failRequestsGreaterThanOne",
                "pods asking for more than one nvidia.com/gpu fail to start on these nodes",
            ),
        ],
    ),
    Case(
        "dp-replicas-misplaced.yaml",
        None,
        [
            (3, 3, "error", "sharing.timeSlicing.resources", "missing required key 'resources'"),
            (
                4,
                5,
                "error",
                "sharing.timeSlicing.replicas",
                "unknown key 'replicas' (did you mean sharing.timeSlicing.resources[].replicas?)",
            ),
        ],
    ),
    Case(
        "dp-replicas-one.yaml",
        None,
        [
            (7, 7, "error", "sharing.timeSlicing.resources[0].replicas", "expected an integer >= 2, got 1"),
        ],
    ),
    Case(
        "dp-timeslicing-typo.yaml",
        None,
        [
            (3, 3, "error", "sharing.time-slicing", "unknown key 'time-slicing' (did you mean sharing.timeSlicing?)"),
        ],
    ),
    Case(
        "mig-cm-no-config-yaml.yaml",
        None,
        [
            (
                8,
                3,
                "error",
                'data["custom-config.yaml"]',
                "mig-manager reads only the key config.yaml; found 'custom-config.yaml'",
            ),
        ],
    ),
    Case(
        "mig-default-cm-edit.yaml",
        None,
        [
            (
                5,
                3,
                "warning",
                "metadata.name",
                "the GPU Operator owns default-mig-parted-config and resets edits to it (gpu-operator#384)",
            ),
        ],
    ),
    Case(
        "mig-enabled-false-devices.yaml",
        None,
        [
            (
                6,
                5,
                "error",
                "mig-configs.half[0].mig-devices",
                "mig-devices is set but mig-enabled is false (upstream: MIG devices included when 'mig-enabled' is false)",
            ),
        ],
    ),
    Case(
        # mig-parted <= v0.12.1 parses profile names with go-nvlib's old parser: '+' only, alphanumeric attributes.
        "mig-rtx-media-profiles-old.yaml",
        "v25.3.0",
        [
            (
                8,
                7,
                "error",
                'mig-configs.no-media[0].mig-devices["1g.24gb-me"]',
                "MIG profile '1g.24gb-me' cannot be read by mig-manager v0.12.1 (GPU Operator v25.3.0): its parser "
                "takes '-' and dotted attributes from v0.12.3 on, and one unreadable profile fails the whole "
                "mig-parted config on every node of the cluster",
            ),
            (
                13,
                7,
                "error",
                'mig-configs.all-media[0].mig-devices["1g.24gb+me.all"]',
                "MIG profile '1g.24gb+me.all' cannot be read by mig-manager v0.12.1 (GPU Operator v25.3.0): its "
                "parser takes '-' and dotted attributes from v0.12.3 on, and one unreadable profile fails the whole "
                "mig-parted config on every node of the cluster",
            ),
        ],
    ),
    Case(
        "mig-unknown-field.yaml",
        None,
        [
            (6, 5, "error", 'mig-configs["all-3g.40gb"][0].node-selector', "unknown key 'node-selector'"),
        ],
    ),
    Case(
        "mig-unquoted-filter.yaml",
        None,
        [
            (
                4,
                5,
                "error",
                'mig-configs["all-1g.10gb"][0].device-filter',
                'expected a quoted PCI ID string such as "0x20B010DE" (optionally ":0x<8 hex digits>"), or a non-empty list of them, got 548737246 (an integer)',
            ),
        ],
    ),
    Case(
        "multi-document.yaml",
        None,
        [
            (
                13,
                11,
                "error",
                "data.shared.sharing.timeSlicing.resources[0].replicas",
                "expected an integer >= 2, got 0",
            ),
            (25, 1, "warning", "", "document 4 is not a GPU Operator config lint knows: not linted"),
        ],
    ),
    Case(
        "values-cdi-default-new.yaml",
        None,
        [
            (
                3,
                3,
                "warning",
                "cdi.default",
                "ignored from GPU Operator v25.10.0: CDI injection is native, so cdi.default does nothing",
            ),
        ],
    ),
    Case(
        "values-default-runtime.yaml",
        "v25.3.3",
        [
            (
                2,
                3,
                "warning",
                "operator.defaultRuntime",
                "ignored from GPU Operator v25.3.0: the runtime is detected from the node, so it does nothing",
            ),
        ],
    ),
    Case(
        "values-deviceplugin-data.yaml",
        None,
        [
            (
                5,
                5,
                "error",
                "devicePlugin.config.default",
                "default config 'any' is not a key of devicePlugin.config.data",
            ),
            (
                14,
                11,
                "error",
                "devicePlugin.config.data.shared.flags.renameByDefault",
                "unknown key 'renameByDefault' (did you mean sharing.timeSlicing.renameByDefault?)",
            ),
        ],
    ),
    Case(
        "values-migmanager-data.yaml",
        None,
        [
            (
                7,
                7,
                "error",
                "migManager.config.data.config",
                "mig-manager reads only the key config.yaml; found 'config'",
            ),
        ],
    ),
    Case(
        "values-migmanager-name-empty.yaml",
        None,
        [
            (
                3,
                5,
                "warning",
                "migManager.config.name",
                "empty: on GPU Operator v26.7.0 MIG manager generates a per-node config (<node>-mig-config) from the hardware; before v26.3.0 an empty name meant default-mig-parted-config",
            ),
        ],
    ),
    Case(
        "values-mps-root.yaml",
        None,
        [
            (
                4,
                5,
                "warning",
                "devicePlugin.mps.root",
                "dead value: no chart template reads devicePlugin.mps.root, so it has no effect",
            ),
        ],
    ),
    Case(
        "values-nri-old.yaml",
        "v25.3.3",
        [
            (3, 3, "error", "cdi.nriPluginEnabled", "not in GPU Operator v25.3.3 (added in v26.3.0)"),
        ],
    ),
    Case(
        "values-typos.yaml",
        None,
        [
            (3, 1, "error", "devicePlugins", "unknown key 'devicePlugins' (did you mean devicePlugin?)"),
            (6, 3, "error", "mig.stratgy", "unknown key 'stratgy' (did you mean mig.strategy?)"),
        ],
    ),
    Case(
        "workload-mig-wildcard.yaml",
        None,
        [
            (
                3,
                5,
                "error",
                'resources.limits["nvidia.com/mig-*"]',
                "'nvidia.com/mig-*' is not a resource: the device plugin advertises one resource per MIG profile",
            ),
            (5, 5, "error", 'resources.requests["nvidia.com/gpu"]', "nvidia.com/gpu must be a whole number, got '0.5'"),
        ],
    ),
]

# Hints that carry the fix a user needs, asserted as substrings: (file, path, hint fragment).
HINTS = [
    ("dp-flags-renameByDefault.yaml", "flags.renameByDefault", "move it to sharing.timeSlicing.renameByDefault"),
    ("dp-replicas-one.yaml", "sharing.timeSlicing.resources[0].replicas", "k8s-device-plugin#1022"),
    ("dp-quoted-replicas.yaml", "sharing.timeSlicing.resources[0].replicas", "write replicas: 4 without quotes"),
    ("dp-key-case.yaml", "flags.migstrategy", "write 'migStrategy'"),
    ("mig-unquoted-filter.yaml", 'mig-configs["all-1g.10gb"][0].device-filter', 'quote it: "0x20B510DE"'),
    ("mig-cm-no-config-yaml.yaml", 'data["custom-config.yaml"]', "rename 'custom-config.yaml' to config.yaml"),
    ("values-mps-root.yaml", "devicePlugin.mps.root", "spec.devicePlugin.mps.root on the ClusterPolicy"),
    ("clusterpolicy-nri-old.yaml", "spec.cdi.nriPluginEnabled", "Argo CD"),
    ("cm-wrong-namespace.yaml", "metadata.namespace", "set metadata.namespace: gpu-operator"),
    ("dp-rename-true.yaml", "sharing.timeSlicing.renameByDefault", "stay Pending"),
    ("mig-rtx-media-profiles-old.yaml", 'mig-configs.no-media[0].mig-devices["1g.24gb-me"]', "v25.3.3 or newer"),
]


def test_media_engine_profiles_are_read_from_mig_manager_v0_12_3() -> None:
    assert _lint("mig-rtx-media-profiles-old.yaml", "v25.3.3").problems == ()


def _lint(file: str, operator_version: str | None) -> LintReport:
    release = get_operator_version(operator_version) if operator_version else None
    return lint_files([CASES_DIR / file], default_options(release))


def test_corpus_is_large_enough_and_complete() -> None:
    on_disk = sorted(p.name for p in CASES_DIR.glob("*.yaml"))
    assert on_disk == sorted(case.file for case in CASES)
    assert len(CASES) >= 25
    assert all(case.findings for case in CASES), "every corpus file is broken in some way"


@pytest.mark.parametrize("case", CASES, ids=[c.file for c in CASES])
def test_case_findings_exactly(case: Case) -> None:
    report = _lint(case.file, case.operator_version)
    got = [(p.line, p.column, p.severity.value, p.path, p.message) for p in report.problems]
    assert got == case.findings
    assert all(p.file == str(CASES_DIR / case.file) for p in report.problems)
    assert report.exit_code == (1 if any(f[2] == "error" for f in case.findings) else 0)


@pytest.mark.parametrize(("file", "path", "fragment"), HINTS)
def test_hint_carries_the_fix(file: str, path: str, fragment: str) -> None:
    case = next(c for c in CASES if c.file == file)
    report = _lint(file, case.operator_version)
    hints = [p.hint for p in report.problems if p.path == path]
    assert hints, f"no finding at {path}"
    assert any(fragment in hint for hint in hints), hints
