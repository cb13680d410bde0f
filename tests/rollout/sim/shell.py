"""Run a plan's commands as a shell would: the kubectl and helm subset gpustack-gen prints, and sleep.

Each command is split with shlex and acted out on the model; ``A && B`` runs B only if A succeeds.
Paths are read from the folder the plan was made for. A command outside the subset fails the run, so
an unexpected command can never pass silently.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from gpustack_gen.change.blockers import LISTING_FAILED
from gpustack_gen.helm_values import dropped_keys
from gpustack_gen.validate.operator_keys import VALUES_KEYS

from . import drain, helm, listing, standalone
from .cluster import TIMED_DAEMONSETS, VOLUME, Blocked, Cluster, SimulationError, WorkloadPod
from .gitops import Controllers
from .listing import expand, selector_matches

_DURATION = re.compile(r"^(\d+)([smh])$")
# The DaemonSets whose templates the model renders (cluster.Cluster._templates).
TEMPLATES = {
    "daemonset/nvidia-container-toolkit-daemonset": "toolkit",
    "daemonset/nvidia-device-plugin-daemonset": "device-plugin",
    "daemonset/gpu-feature-discovery": "gfd",
}
HAMI_WORKLOADS = ("daemonset/hami-device-plugin", "deployment/hami-scheduler")


def seconds(text: str) -> int:
    match = _DURATION.match(text)
    if match is None:
        raise SimulationError(f"bad duration {text!r}")
    return int(match.group(1)) * {"s": 1, "m": 60, "h": 3600}[match.group(2)]


def load_documents(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise SimulationError(f"error: the path {str(path)!r} does not exist")
    return [doc for doc in YAML(typ="safe", pure=True).load_all(path.read_text(encoding="utf-8")) if doc]


LISTING = ["kubectl", "get", "nodes,pods,pdb", "--all-namespaces"]  # what ``gpustack-gen blockers`` reads
LOCAL_HELM = (["repo", "add"], ["repo", "update"])  # commands that change only this machine


def _failure_guard(command: str) -> tuple[str, bool]:
    """``{ A || echo 'listing failed'; }`` as ``A`` and True; any other command as itself and False. The model's
    listing never fails, so the guard's echo never runs."""
    if not (command.startswith("{ ") and command.endswith("; }")):
        return command, False
    inner, _, alternative = command[2:-3].partition(" || ")
    if shlex.split(alternative) != ["echo", LISTING_FAILED]:
        raise SimulationError(f"the model cannot run the group {command!r}")
    return inner, True


class Shell:
    def __init__(self, cluster: Cluster, cwd: Path, context: str) -> None:
        self.cluster = cluster
        self.cwd = cwd
        self.context = context  # the kube context that reaches ``cluster``
        self.controllers = Controllers(cluster)  # Argo CD and Flux, once their objects land
        cluster.tickers.append(self.controllers.step)
        self.workloads: dict[str, dict[str, Any]] = {}  # namespace/name -> last applied fragment
        self.replicas: dict[str, int] = {}  # namespace/name -> pods, as the fleet being rolled out says
        self.repositories: dict[str, str] = {}  # `helm repo add` name -> URL: none on a fresh machine

    def run(self, line: str) -> None:
        for command in line.split(" && "):
            command = expand(command, self.capture)
            if " | " in command:
                self._pipe(*command.split(" | "))
            else:
                self._run(self._words(command))
        self.cluster.settle()

    def _pipe(self, first: str, second: str) -> None:
        """``helm get values RELEASE -o json | gpustack-gen values-kept FILES``: the release's user-supplied
        values (helm cmd/helm/get_values.go:77,87), checked by gpustack-gen's own function; or the cluster's
        listing, behind its failure guard, piped to ``gpustack-gen blockers``."""
        first, guarded = _failure_guard(first)
        source, check = self._words(first), self._words(second)
        if source == [*LISTING, "-o", "json"] and check[:2] == ["gpustack-gen", "blockers"]:
            if not guarded:  # without pipefail, a kubectl that fails halfway would be judged on what it printed
                raise SimulationError(f"the listing piped to {second!r} has no failure guard")
            self._blockers(check[2:])
            return
        if source[:3] != ["helm", "get", "values"] or check[:2] != ["gpustack-gen", "values-kept"]:
            raise SimulationError(f"the model cannot run the pipe {first!r} | {second!r}")
        release = self.cluster.release
        live = release.user_values if release is not None else {}
        owned = tuple(gate.path for gate in VALUES_KEYS)
        dropped = dropped_keys(live, [load_documents(self.cwd / path)[0] for path in check[2:]], owned)
        if dropped:
            raise SimulationError(f"error: the release has values the upgrade would drop: {', '.join(dropped)}")

    def _blockers(self, args: list[str]) -> None:
        """``gpustack-gen blockers`` itself, on the listing the model prints: its exit status is the step's."""
        from click.testing import CliRunner

        from gpustack_gen.cli import main

        result = CliRunner().invoke(main, ["blockers", *args], input=json.dumps(listing.objects(self.cluster)))
        if result.exit_code != 0:
            raise Blocked(f"gpustack-gen blockers exits {result.exit_code}: {result.output.strip()}")

    def check(self, line: str) -> None:
        """A step's verify: waits and diffs must pass; listings are shown to a person, not checked."""
        for command in line.split(" && "):
            words = self._words(expand(command, self.capture))
            if words[:2] in (["kubectl", "wait"], ["kubectl", "rollout"], ["kubectl", "diff"]):
                self._run(words)
            elif words[:2] == ["test", "-z"]:
                if words[2]:
                    raise SimulationError(f"test -z: the check lists {words[2].strip()!r}")
            elif words[:2] == ["kubectl", "exec"]:
                self._exec(words)
        self.cluster.settle()

    def capture(self, command: str) -> str:
        """A command substitution's stdout: ``A || echo X`` gives X when A fails; a failure alone gives nothing."""
        first, _, alternative = command.partition(" || ")
        try:
            return listing.output(self.cluster, self._words(first))
        except SimulationError:
            words = shlex.split(alternative)
            return " ".join(words[1:]) if words[:1] == ["echo"] else ""

    # --- dispatch -------------------------------------------------------------------------------

    def _words(self, command: str) -> list[str]:
        """The command's words without the flag that names its cluster, which must be this shell's: kubectl's
        global ``--context`` and helm's ``--kube-context`` (pkg/cli/environment.go). A kubectl or cluster-reaching
        helm command naming none would run against whatever context is current: the model refuses it."""
        words = shlex.split(command)
        flag = {"kubectl": "--context", "helm": "--kube-context"}.get(words[0])
        if flag is None or (words[0] == "helm" and words[1:3] in LOCAL_HELM):
            return words
        if flag not in words:
            raise SimulationError(f"{command!r} names no kube context: it runs against the current one")
        index = words.index(flag)
        if words[index + 1] != self.context:
            raise SimulationError(f"{command!r} runs against context {words[index + 1]}, not {self.context}")
        return words[:index] + words[index + 2 :]

    def _run(self, words: list[str]) -> None:
        head = words[:2]
        if words[:2] == ["test", "-z"]:
            if words[2]:
                raise Blocked(f"test -z: the command's precondition lists {words[2].strip()!r}")
        elif words[0] == "sleep":
            self.cluster.advance(int(words[1]))
        elif head == ["kubectl", "apply"]:
            self._apply(self._option(words, "-k"))
        elif head == ["kubectl", "diff"]:
            self._diff(self._option(words, "-k"))
        elif head == ["kubectl", "patch"] and words[2] == "applications.argoproj.io":
            self.controllers.sync_application(words[3])  # its `operation` asks for a sync
        elif head == ["kubectl", "patch"]:
            (patch,) = load_documents(self.cwd / self._option(words, "--patch-file"))
            self.cluster.patch(patch)
        elif head == ["kubectl", "label"]:
            self._label(words)
        elif head == ["kubectl", "drain"]:
            self._drain(words)
        elif head == ["kubectl", "uncordon"]:
            for node in self._nodes(self._option(words, "--selector")):
                self._check_not_reconfiguring(node.name)
                node.unschedulable = False
        elif head == ["kubectl", "rollout"]:
            self._rollout(words)
        elif head == ["kubectl", "wait"]:
            self._wait(words)
        elif head == ["kubectl", "get"]:
            pass  # a listing, for a person (the checks that must list nothing are test -z)
        elif head == ["kubectl", "exec"]:
            pass  # a look inside a pod, for a person
        elif words[:3] == ["helm", "repo", "add"]:
            self._repo_add(words[3], words[4])
        elif words[:3] == ["helm", "repo", "update"]:
            if not self.repositories:
                raise SimulationError("Error: no repositories found. You must add one before updating")
            for name in words[3:]:
                if name not in self.repositories:
                    raise SimulationError(f"Error: no repositories found matching '{name}'.  Nothing will be updated")
        elif head == ["helm", "upgrade"]:
            self._helm(words)
        elif (
            head == ["helm", "uninstall"]
            and self.cluster.standalone is not None
            and words[2] == self.cluster.standalone.name
        ):
            if self._option(words, "--namespace") != self.cluster.standalone.namespace:
                raise SimulationError(f"Error: uninstall: Release not loaded: {words[2]}: release: not found")
            self.cluster.standalone_uninstall()
        elif head == ["helm", "uninstall"]:
            if words[2] != "hami" or self.cluster.hami is None:
                raise SimulationError(f"Error: uninstall: Release not loaded: {words[2]}: release: not found")
            self.cluster.hami_uninstall()
        elif words[:3] == ["kubectl", "delete", "configmap"]:
            self._delete_configmaps(words)
        else:
            raise SimulationError(f"the model cannot run {' '.join(words)!r}")

    @staticmethod
    def _option(words: list[str], name: str) -> str:
        for index, word in enumerate(words):
            if word == name:
                return words[index + 1]
            if word.startswith(name + "="):
                return word.split("=", 1)[1]
        raise SimulationError(f"{' '.join(words)}: missing {name}")

    def _nodes(self, selector: str) -> list[Any]:
        return [n for n in self.cluster.nodes.values() if selector_matches(selector, n.labels)]

    def _check_not_reconfiguring(self, name: str) -> None:
        node = self.cluster.nodes[name]
        if node.mig_done_at is not None or node.mig_react_at is not None:
            raise SimulationError(f"uncordon {name} while its MIG reconfiguration is still pending")

    # --- kubectl --------------------------------------------------------------------------------

    def _drain(self, words: list[str]) -> None:
        timeout = seconds(self._option(words, "--timeout")) if any(w.startswith("--timeout") for w in words) else 0
        dry_run = "--dry-run=client" in words
        if any(w.startswith("--dry-run") for w in words) and not dry_run:
            raise SimulationError(f"the model runs only --dry-run=client: {' '.join(words)}")
        flags = drain.DrainFlags(
            force="--force" in words,
            delete_emptydir="--delete-emptydir-data" in words,
            ignore_daemonsets="--ignore-daemonsets" in words,
            timeout=timeout,
            dry_run=dry_run,
        )
        nodes = self._nodes(self._option(words, "--selector"))
        if not nodes:
            raise SimulationError("error: No resources found")
        drain.drain(self.cluster, nodes, flags)

    def _kustomization(self, folder: str) -> list[dict[str, Any]]:
        root = self.cwd / folder
        (kustomization,) = load_documents(root / "kustomization.yaml")
        return [doc for name in kustomization["resources"] for doc in load_documents(root / name)]

    def _apply(self, folder: str) -> None:
        for document in self._kustomization(folder):
            if document["kind"] == "Namespace":
                self.cluster.namespaces.add(document["metadata"]["name"])
            elif document["kind"] == "ConfigMap":
                namespace = document["metadata"]["namespace"]
                if namespace not in self.cluster.namespaces:
                    raise SimulationError(f'namespaces "{namespace}" not found')
                self.cluster.apply_configmap(document["metadata"]["name"], dict(document["data"]))
            else:
                self.controllers.apply(document)

    def _diff(self, folder: str) -> None:
        for document in self._kustomization(folder):
            if document["kind"] == "ConfigMap":
                history = self.cluster.configmaps.get(document["metadata"]["name"])
                if history is None or history.current != dict(document["data"]):
                    raise SimulationError(f"kubectl diff -k {folder}: ConfigMap {document['metadata']['name']} differs")

    def _delete_configmaps(self, words: list[str]) -> None:
        namespace = self._option(words, "-n")
        names = [w for w in words[3:] if not w.startswith("-") and w != namespace]
        spec = self.cluster.spec or {}
        named = {
            (spec.get("devicePlugin", {}).get("config") or {}).get("name"),
            spec.get("migManager", {}).get("config", {}).get("name"),
        }
        for name in names:
            if name in named:
                raise SimulationError(f"ConfigMap {name} deleted while the ClusterPolicy still names it")
            if name not in self.cluster.configmaps and "--ignore-not-found" not in words:
                raise SimulationError(f'configmaps "{name}" not found')
            self.cluster.configmaps.pop(name, None)

    def _label(self, words: list[str]) -> None:
        """``kubectl label nodes --selector S ...`` or ``kubectl label nodes NAME... ...`` (a word without ``=``
        or a trailing ``-`` is a name)."""
        selector = self._option(words, "--selector") if "--selector" in words else None
        changes: dict[str, str | None] = {}
        names: list[str] = []
        for word in words[3:]:
            if word.startswith("--"):
                continue
            if word == selector:
                continue
            if word.endswith("-") and "=" not in word:
                changes[word[:-1]] = None
            elif "=" in word:
                key, value = word.split("=", 1)
                changes[key] = value
            else:
                names.append(word)
        if selector is None and not names:
            raise SimulationError("error: resource(s) were provided, but no name was specified")
        if selector is None:
            missing = [name for name in names if name not in self.cluster.nodes]
            if missing:
                raise SimulationError(f'Error from server (NotFound): nodes "{missing[0]}" not found')
        targets = self._nodes(selector) if selector is not None else [self.cluster.nodes[name] for name in names]
        for node in targets:
            for key, value in changes.items():
                if (
                    value is not None
                    and key in node.labels
                    and node.labels[key] != value
                    and "--overwrite" not in words
                ):
                    raise SimulationError(f"'{key}' already has a value ({node.labels[key]}), and --overwrite is false")
            self.cluster.set_labels(node, changes)

    def _rollout(self, words: list[str]) -> None:
        verb = words[2]
        resources = [w for w in words[3:] if "/" in w and not w.startswith("-")]
        kinds = {
            "daemonset/nvidia-device-plugin-daemonset": "dp",
            "daemonset/gpu-feature-discovery": "gfd",
            "daemonset/nvidia-device-plugin-mps-control-daemon": "mps",
        }
        if verb == "restart" and set(resources) <= set(HAMI_WORKLOADS):
            if self.cluster.hami is None:
                raise SimulationError(f"{resources[0]} not found")
            self.cluster.hami_restart()
            return
        if verb == "restart":
            for resource in resources:
                if resource not in kinds:
                    raise SimulationError(f"the model cannot restart {resource}")
                for node in self.cluster.nodes.values():
                    self.cluster.start_operand(node, kinds[resource])
            return
        if verb != "status":
            raise SimulationError(f"kubectl rollout {verb}")
        timeout = seconds(self._option(words, "--timeout"))
        (resource,) = resources
        self._until(lambda: self._rolled_out(resource, kinds), timeout, f"rollout status {resource}")

    def _rolled_out(self, resource: str, kinds: dict[str, str]) -> bool:
        queued = self.controllers.operator_queued()
        if queued is not None and resource.startswith("daemonset/"):
            # The DaemonSet still has the template from before the commit: rollout status passes on it.
            raise SimulationError(
                f"rollout status {resource} passed before the {queued}'s controller synced the new values"
            )
        release = self.cluster.standalone
        if release is not None and resource == f"daemonset/{release.daemonset}":
            if release.on_delete:
                # kubectl refuses: "rollout status is only available for RollingUpdate strategy type"
                # (kubectl@v0.29.0 pkg/polymorphichelpers/rollout_status.go:104-105).
                raise SimulationError(f"rollout status {resource}: the DaemonSet updates OnDelete")
            return all(n.nvdp.running for n in self.cluster.nodes.values() if release.schedules_on(n.labels))
        if resource in HAMI_WORKLOADS:
            return self.cluster.hami_rolled_out()
        if resource in kinds:
            kind = kinds[resource]
            for node in self.cluster.nodes.values():
                pod = getattr(node, kind)
                if kind == "mps" and node.labels.get("nvidia.com/mps.capable") != "true":
                    continue
                if kind in ("dp", "mps") and not self.cluster.device_plugin_selected(node):
                    continue
                if not pod.running or pod.retry_at is not None:
                    return False
            return True
        if resource in TEMPLATES and self.cluster.template_stale(TEMPLATES[resource]):
            # kubectl reports success on the old template; a plan that moves on has checked nothing.
            raise SimulationError(f"rollout status {resource} passed on the template the Operator has not re-rendered")
        if resource in TIMED_DAEMONSETS:
            return self.cluster.spec is not None and self.cluster.rolled_out(resource)
        return self.cluster.spec is not None  # the Operator rolls with the install

    def _until(self, done: Any, timeout: int, what: str) -> None:
        waited = 0
        while not done():
            if waited >= timeout:
                raise SimulationError(f"timed out waiting for {what}")
            self.cluster.advance(10)
            waited += 10

    def _wait(self, words: list[str]) -> None:
        timeout = seconds(self._option(words, "--timeout"))
        condition = self._option(words, "--for")
        deleted = [w for w in words if w.startswith("daemonset/")]
        if condition == "delete" and deleted:
            # The Operator deletes its device plugin DaemonSet once devicePlugin.enabled is false.
            if deleted != ["daemonset/nvidia-device-plugin-daemonset"]:
                raise SimulationError(f"the model cannot wait for {deleted} to go")
            self._until(
                lambda: (
                    self.cluster.spec is not None
                    and self.cluster.reconciled()
                    and not self.cluster.device_plugin_enabled()
                ),
                timeout,
                f"{deleted[0]} to be deleted",
            )
            return
        if condition == "delete":
            # The plan asks the person to remove the node group now: the nodes go, with whatever runs there.
            nodes = self._nodes(self._option(words, "--selector"))
            if "--field-selector" in words:
                if self._option(words, "--field-selector") != "spec.unschedulable=true":
                    raise SimulationError(f"the model has no field selector {self._option(words, '--field-selector')}")
                nodes = [n for n in nodes if n.unschedulable]
            for node in nodes:
                if not node.unschedulable or any(pod.node == node.name for pod in self.cluster.pods):
                    raise SimulationError(f"node {node.name} removed with pods still running (drain it first)")
                del self.cluster.nodes[node.name]
            return
        if words[2].startswith(("applications.argoproj.io/", "helmreleases.helm.toolkit.fluxcd.io/")):
            name = words[2].split("/", 1)[1]
            synced = (
                self.controllers.ready_at_generation
                if condition == "condition=Ready"
                else self.controllers.status_synced
            )
            self._until(lambda: synced(name) and self._policy_ready(), timeout, f"{name} synced")
            return
        path, expected = _jsonpath_condition(condition)
        if self.cluster.standalone is not None and f"daemonset/{self.cluster.standalone.daemonset}" in words:
            self._until(
                lambda: _standalone_field(self.cluster.standalone, path) == expected,
                timeout,
                f"the standalone plugin's DaemonSet {path}={expected}",
            )
            return
        env = re.fullmatch(r'\.spec\.template\.spec\.containers\[\*\]\.env\[\?\(@\.name=="(\w+)"\)\]\.value', path)
        if env is not None:
            (daemonset,) = (w for w in words if w in TEMPLATES)
            name = env.group(1)
            self._until(
                lambda: self.cluster.template_env(TEMPLATES[daemonset], name) == expected,
                timeout,
                f"{daemonset} {name}={expected}",
            )
            return
        volume = re.fullmatch(r'\.spec\.template\.spec\.volumes\[\?\(@\.name=="([\w-]+)"\)\]\.configMap\.name', path)
        if volume is not None:
            (daemonset,) = (w for w in words if w in TEMPLATES)
            self._until(
                lambda: self.cluster.templates.get(TEMPLATES[daemonset], {}).get(VOLUME) == expected == volume.group(1),
                timeout,
                f"{daemonset} to mount {expected}",
            )
            return
        if words[2].startswith("clusterpolicies"):
            self._until(lambda: self._policy_ready(), timeout, "the ClusterPolicy to be ready")
            return
        nodes = self._nodes(self._option(words, "--selector"))
        if not nodes:
            raise SimulationError("error: no matching resources found")
        shown = condition.removeprefix("jsonpath=").replace("{", "").replace("}", "")
        self._until(lambda: all(_node_field(n, path) == expected for n in nodes), timeout, shown)

    def _policy_ready(self) -> bool:
        """ClusterPolicy ready: every operand pod is up (v25.3.3 checks NumberUnavailable==0 only)."""
        if self.cluster.spec is None:
            return False
        for node in self.cluster.nodes.values():
            if node.paused:
                continue
            # A DaemonSet counts only the nodes it selects: one labelled device-plugin=false has no plugin pod.
            if (self.cluster.device_plugin_selected(node) and not node.dp.running) or not node.gfd.running:
                return False
        return True

    def _exec(self, words: list[str]) -> None:
        """The looks into an operand's ConfigMap volume that the plan uses as checks: they see what the kubelet
        has synced into that pod so far (``kubectl exec daemonset/...`` picks one of its pods)."""
        command = words[words.index("--") + 1 :]
        spec = self.cluster.spec
        if spec is None:
            raise SimulationError("error: no ClusterPolicy, no operand pod to exec into")
        nodes = list(self.cluster.nodes.values())
        if command[0] == "cat" and command[1].startswith("/available-configs/"):
            key = command[1].removeprefix("/available-configs/")
            pods = [n.dp for n in nodes if n.dp.running]
            name = (spec["devicePlugin"].get("config") or {}).get("name", "")
            seen = self.cluster.view(name, pods[0].started) if pods else None
            if seen is None or key not in seen:
                raise SimulationError(f"cat: /available-configs/{key}: No such file or directory")
            return
        if command[:2] == ["nvidia-mig-parted", "assert"]:
            config = self._option(command, "-c")
            capable = [n for n in nodes if n.mig_started]
            configs = self.cluster.mig_configs(capable[0]) if capable else None
            if configs is None or config not in configs:
                raise SimulationError(f"nvidia-mig-parted assert: no config {config} in the mounted file")
            return
        raise SimulationError(f"the model cannot exec {' '.join(command)!r}")

    # --- helm -----------------------------------------------------------------------------------

    def _repo_add(self, name: str, url: str) -> None:
        """Adding a name again with the same URL does nothing; with another URL it fails without
        --force-update (helm v3 cmd/helm/repo_add.go)."""
        if self.repositories.get(name, url) != url:
            raise SimulationError(f"Error: repository name ({name}) already exists, please specify a different name")
        self.repositories[name] = url

    def _helm(self, words: list[str]) -> None:
        files = [self.cwd / words[i + 1] for i, w in enumerate(words) if w in ("--values", "-f")]
        chart = words[words.index("--install") + 2]
        local = chart.startswith(("./", "../", "/", "oci://"))
        if not local and chart.split("/", 1)[0] not in self.repositories:
            raise SimulationError(f"Error: repo {chart.split('/', 1)[0]} not found")
        if chart == "hami-charts/hami":
            namespace = self._option(words, "--namespace")
            if namespace not in self.cluster.namespaces and "--create-namespace" not in words:
                raise SimulationError(f'helm: namespaces "{namespace}" not found (no --create-namespace)')
            self.cluster.namespaces.add(namespace)
            self.cluster.hami_upgrade(
                self._option(words, "--version"), namespace, [load_documents(f)[0] for f in files]
            )
            return
        if chart.rsplit("/", 1)[-1] == standalone.CHART:
            namespace = self._option(words, "--namespace")
            if namespace not in self.cluster.namespaces and "--create-namespace" not in words:
                raise SimulationError(f'helm: namespaces "{namespace}" not found (no --create-namespace)')
            self.cluster.namespaces.add(namespace)
            self.cluster.standalone_upgrade(
                words[words.index("--install") + 1],
                namespace,
                self._option(words, "--version"),
                [load_documents(f)[0] for f in files] + _set_documents(words),
                reuse="--reuse-values" in words,
            )
            return
        if chart == "nvidia/gpu-operator":
            self.controllers.helm_upgrade_refused()
            documents = [load_documents(f)[0] for f in files] + [
                _set_value(words[i + 1]) for i, w in enumerate(words) if w == "--set"
            ]
            self.cluster.helm_upgrade(
                self._option(words, "--version"),
                documents,
                reuse="--reuse-values" in words,
                openapi_checked="--disable-openapi-validation" not in words,
            )
            self.controllers.reconcile_back()
            return
        self._workload(words, files)

    def _workload(self, words: list[str], files: list[Path]) -> None:
        """The service's own chart: its values are the fragment (the model has no chart of its own). With
        --reuse-values Helm merges the old values under the new ones, limits key by key (helm coalesce)."""
        fragment = files[-1]
        namespace = self._option(words, "--namespace")
        name = fragment.name.removesuffix(".yaml").split(".", 1)[1]
        workload = f"{namespace}/{name}"
        values = load_documents(fragment)[0]
        if "--reuse-values" in words and workload in self.workloads:
            values = helm.coalesce(values, self.workloads[workload])
        self.deploy(workload, values)

    def deploy(self, workload: str, values: dict[str, Any]) -> None:
        """Replace the workload's pods with pods of its new fragment (a rolling update), as many as the fleet
        gives it (the fragment carries resources and scheduling, not the replica count)."""
        self.cluster.pods = [p for p in self.cluster.pods if p.workload != workload]
        limits = {k: int(v) for k, v in values["resources"]["limits"].items()}
        for _ in range(self.replicas[workload]):
            empty_dir = workload in self.cluster.empty_dir_workloads
            self.cluster.pods.append(WorkloadPod(workload, limits, dict(values["nodeSelector"]), empty_dir=empty_dir))
        self.workloads[workload] = values
        self.cluster.schedule()


def _set_documents(words: list[str]) -> list[dict[str, Any]]:
    """``--set`` and ``--set-json`` after the ``-f`` files, in their order (helm ``pkg/cli/values/options.go``
    MergeValues reads --set-json before --set: the model takes them as written, which the plans never mix)."""
    documents = []
    for index, word in enumerate(words):
        if word == "--set":
            documents.append(_set_value(words[index + 1]))
        elif word == "--set-json":
            path, text = words[index + 1].split("=", 1)
            value: Any = json.loads(text)
            for key in reversed(path.split(".")):
                value = {key: value}
            documents.append(value)
    return documents


def _set_value(assignment: str) -> dict[str, Any]:
    """``--set a.b=v`` as a values document after the ``-f`` files (helm ``pkg/strvals``: true/false are booleans,
    digits integers)."""
    path, text = assignment.split("=", 1)
    value: Any = {"true": True, "false": False}.get(text, int(text) if text.isdigit() else text)
    for key in reversed(path.split(".")):
        value = {key: value}
    return value  # type: ignore[no-any-return]


def _standalone_field(release: Any, path: str) -> str | None:
    """A field of the standalone chart's plugin DaemonSet: its pod template's affinity is the values' as given
    (``templates/daemonset-device-plugin.yml:254-261``); the model reads the one path the plan waits on."""
    match = re.fullmatch(
        r"\.spec\.template\.spec\.affinity\.nodeAffinity\.requiredDuringSchedulingIgnoredDuringExecution"
        r"\.nodeSelectorTerms\[(\d+)\]\.matchExpressions\[(\d+)\]\.key",
        path,
    )
    if match is None:
        raise SimulationError(f"the model cannot read the standalone DaemonSet's {path}")
    required = ((release.values.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    try:
        term = required["nodeSelectorTerms"][int(match.group(1))]
        return str(term["matchExpressions"][int(match.group(2))]["key"])
    except (KeyError, IndexError, TypeError):
        return None  # kubectl wait: the path does not exist (yet), it keeps waiting


def _jsonpath_condition(condition: str) -> tuple[str, str]:
    match = re.match(r"^jsonpath=\{(.+)\}=(.*)$", condition)
    if match is None:
        raise SimulationError(f"bad --for {condition!r}")
    return match.group(1).replace("\\.", "\x00"), match.group(2)


def _node_field(node: Any, path: str) -> str | None:
    parts = [p.replace("\x00", ".") for p in path.lstrip(".").split(".")]
    if parts[:2] == ["metadata", "labels"]:
        return node.labels.get(parts[2])  # type: ignore[no-any-return]
    if parts[:2] == ["status", "allocatable"]:
        value = node.allocatable.get(parts[2])
        return None if value is None else str(value)
    if parts == ["spec", "unschedulable"]:
        return "true" if node.unschedulable else None
    raise SimulationError(f"the model has no node field {path}")
