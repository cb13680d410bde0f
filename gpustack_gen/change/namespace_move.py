"""A chart whose namespace changes: an error, since Helm finds a release by name within its namespace, so
``helm upgrade --install`` in the new one installs a second release beside the first."""

from __future__ import annotations

from ..model.fleet import Cluster
from ..shell import Script, text_in
from .model import Finding, Level, Outcome


def namespace_move(
    rule: str,
    component: str,
    setting: str,
    cluster: Cluster,
    before: str,
    after: str,
    uninstall: Script,
    clash: str = "",
    then: str = "",
) -> Outcome:
    """``component`` (as the message names it) moves from namespace ``before`` to ``after`` on ``cluster``;
    ``setting`` is the fleet field that says it, ``uninstall`` the command that removes the first release
    (``then``: what follows it), ``clash`` what running both would break."""
    return Outcome(
        Finding(
            rule,
            Level.ERROR,
            f"{component} moves from namespace {before} to {after}: that is a second install beside the first{clash}",
            None,
            (),
            f"keep {setting} {before}, or uninstall it there first: {text_in(cluster.kube_context, uninstall)}{then}",
        )
    )
