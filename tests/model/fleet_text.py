"""A small valid fleet and helpers that change one line of it, so that each test shows one mistake.

``BASE`` is line-numbered in the comments; ``edit({16: "sharing: {...}"})`` replaces line 16 while keeping
its indentation, so expected ``file:line:col`` positions can be read off the text.
"""

from __future__ import annotations

import pytest

from gpustack_gen.errors import FleetError, Problem, Severity
from gpustack_gen.model import Fleet, load_fleet

BASE = """\
apiVersion: gpustack-gen/v1alpha1
kind: Fleet
defaults:
  operator: {version: v25.3.3}
clusters:
  - name: prod
    kubernetes: "1.29.15"
    containerRuntime: containerd
    mig: {strategy: single}
    nodePools:
      - name: pool
        gpu: tesla-t4
        nodes: 2
        gpusPerNode: 1
        nodeSelector: {pool: pool}
        sharing: {strategy: none}
    workloads:
      - {name: app, namespace: ml, pool: pool}
"""
#  1 apiVersion          7 kubernetes          13 nodes
#  2 kind                8 containerRuntime    14 gpusPerNode
#  3 defaults            9 mig                 15 nodeSelector
#  4   operator         10 nodePools           16 sharing
#  5 clusters           11 - name: pool        17 workloads
#  6 - name: prod       12 gpu                 18 - {name: app, ...}


def edit(changes: dict[int, str], base: str = BASE) -> str:
    """Replace whole lines (1-based), keeping each replaced line's indentation; '\\n' in a value adds lines."""
    lines = base.splitlines()
    for number, new in changes.items():
        old = lines[number - 1]
        indent = " " * (len(old) - len(old.lstrip(" ")))
        lines[number - 1] = "\n".join(indent + part for part in new.split("\n"))
    return "\n".join(lines) + "\n"


def load(text: str) -> Fleet:
    return load_fleet(text, name="fleet.yaml")


def problems(text: str) -> tuple[Problem, ...]:
    with pytest.raises(FleetError) as caught:
        load(text)
    return caught.value.problems


def the_error(text: str) -> Problem:
    """The one error ``text`` has (warnings aside); fails when there are none or several."""
    errors = [p for p in problems(text) if p.severity is Severity.ERROR]
    assert len(errors) == 1, "\n".join(p.format() for p in errors)
    return errors[0]


def check(problem: Problem, where: str, path: str, message: str, hint: str) -> None:
    """``where`` is ``file:line:col``; ``message`` and ``hint`` are fragments."""
    assert f"{problem.file}:{problem.line}:{problem.column}" == where, problem.format()
    assert problem.path == path, problem.format()
    assert message in problem.message, problem.format()
    assert hint in problem.hint, problem.format()
    assert problem.hint, f"no hint: {problem.format()}"
