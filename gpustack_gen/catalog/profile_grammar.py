"""Which MIG profile names the mig-manager of a GPU Operator release can read.

mig-parted up to v0.12.1 (the mig-manager of GPU Operator v25.3.0 and older) parses profile names with the
go-nvlib parser it vendors (pkg/nvlib/device/mig_profile.go at that time): it splits the name on '+' only,
needs the part before it to end in 'gb', and takes alphanumeric attributes. The RTX PRO 6000 Blackwell names
with '-me' or '+me.all' ('1g.24gb-me', '1g.24gb+me.all') fail it, and one name it cannot read fails the whole
config file on every node of the cluster. mig-parted v0.12.3 (GPU Operator v25.3.3) reads them, and is the
first to ship them in its config-default.yaml.
"""

from __future__ import annotations

import re

from gpustack_gen.versions import format_version, parse_version
from gpustack_gen.versions.gpu_operator import OPERATOR_VERSIONS, OperatorVersion

_OLD_GRAMMAR = re.compile(r"(?:\d+c\.)?\d+g\.\d+gb(?:\+[A-Za-z0-9]+(?:,[A-Za-z0-9]+)*)?")
EXTENDED_NAMES_FROM = (0, 12, 3)  # the first mig-manager that reads them


def reads_profile(release: OperatorVersion, profile: str) -> bool:
    """Whether the mig-manager ``release`` ships can parse the MIG profile name ``profile``."""
    version = parse_version(release.mig_manager)
    return (version is not None and version >= EXTENDED_NAMES_FROM) or _OLD_GRAMMAR.fullmatch(profile) is not None


def unreadable_profile(release: OperatorVersion, profile: str) -> tuple[str, str] | None:
    """(message, hint) when the mig-manager of ``release`` cannot parse ``profile``; None when it can."""
    if reads_profile(release, profile):
        return None
    newer = next((r.version for r in OPERATOR_VERSIONS if r.key > release.key and reads_profile(r, profile)), None)
    message = (
        f"MIG profile {profile!r} cannot be read by mig-manager {release.mig_manager} (GPU Operator "
        f"{release.version}): its parser takes '-' and dotted attributes from {format_version(EXTENDED_NAMES_FROM)} "
        "on, and one unreadable profile fails the whole mig-parted config on every node of the cluster"
    )
    instead = "use a profile without '-me' or '+me.all'"
    return message, f"pin operator.version {newer} or newer, or {instead}" if newer else instead
