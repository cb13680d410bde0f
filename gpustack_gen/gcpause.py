"""Pause the cyclic garbage collector around work that builds many small, acyclic objects.

Reading a fleet, resolving it and rendering it create hundreds of thousands of containers with no
cycles; reference counting frees them, while the cyclic collector would rescan the growing heap again
and again (up to 40% of the time at fleet scale). A pause alone only postpones that: every object the
block allocated would sit in the youngest generation, and the first collection after it would walk them
all (0.3-0.7 s a block at 1000 clusters). So the block's survivors (the fleet, the bundle) are frozen
into the permanent generation instead: reference counting still frees them, and the collector skips them.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.freeze()  # a reference cycle among frozen objects stays until gc.unfreeze(); the work leaves none
            gc.enable()
