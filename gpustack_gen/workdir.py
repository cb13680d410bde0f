"""Where the files a printed command names are, seen from the folder the user runs it in (where ``plan`` or
``verify`` ran): rendered files under ``rendered/<cluster>``, the fleet's own paths rebased from its folder."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model.fleet import Cluster


@dataclass(frozen=True)
class Paths:
    """Where things are, seen from the folder the commands run in."""

    rendered: str = "rendered"  # the folder render wrote into (render --out)
    fleet_dir: str = "."  # the fleet file's folder

    def cluster_dir(self, cluster: Cluster) -> str:
        return posixpath.join(self.rendered, cluster.name)

    def rendered_file(self, cluster: Cluster, name: str) -> str:
        return posixpath.join(self.rendered, cluster.name, name)

    def from_fleet(self, path: str) -> str:
        """A file path the fleet file gives relative to itself (an absolute one stays as it is)."""
        if posixpath.isabs(path):
            return path
        return posixpath.normpath(posixpath.join(self.fleet_dir, path))

    def chart(self, reference: str) -> str:
        """A chart reference: a local chart (``./`` or ``../``) is rebased and keeps its ``./`` (helm would read
        ``charts/api`` as a repository and chart name when no such folder exists); others stay as they are."""
        if not reference.startswith(("./", "../")):
            return reference
        path = self.from_fleet(reference)
        return path if path.startswith(("../", "/")) else f"./{path}"
