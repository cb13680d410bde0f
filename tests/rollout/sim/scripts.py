"""Commands a test writes as text (the old diff's, in ``broken.yaml``), read back into argument lists."""

from __future__ import annotations

import shlex

from gpustack_gen.shell import Command, Script, all_of, helm, in_cluster, kubectl

LOCAL_HELM = (["repo", "add"], ["repo", "update"])


def script(text: str, context: str | None = "prod") -> Script:
    """``a && b`` of plain commands; with ``context``, each kubectl and cluster-reaching helm command names it
    (``None``: as written, so that it runs against the shell's current context)."""
    parts: list[Script] = []
    for part in text.split(" && "):
        words = shlex.split(part)
        command = Command(tuple(words))
        if context is not None and words[0] == "kubectl":
            command = kubectl(*words[1:])
        elif context is not None and words[0] == "helm" and words[1:3] not in LOCAL_HELM:
            command = helm(*words[1:])
        parts.append(command if context is None else in_cluster(command, context))
    return all_of(*parts)
