"""Bounds on what a fleet file may cost to read: hostile input is refused at these limits."""

MAX_FILE_BYTES = 8 * 1024 * 1024
# Above this size a file that the fast reader does not take is refused instead of re-read slowly (the
# detailed round-trip reader costs about 10 s and 170 MB per MiB).
MAX_DETAILED_BYTES = 1024 * 1024
# Values after alias expansion: a cluster of 8 pools and 20 workloads is about 260, so this admits
# fleets of thousands of clusters and refuses an alias bomb as soon as its size is known.
MAX_NODES = 1_000_000
MAX_DEPTH = 64
