"""The fleet intent: reading it, validating it, and resolving it into a :class:`Fleet`."""

from .fleet import Cluster, Fleet, Pool, Sharing, Workload
from .load import load_fleet

__all__ = ["Cluster", "Fleet", "Pool", "Sharing", "Workload", "load_fleet"]
