"""Bounds on what reading a YAML input may cost, one per reader: hostile input is refused at these limits."""

# The fleet file (``source.py``).
MAX_FLEET_BYTES = 8 * 1024 * 1024
# Above this size a fleet file that the fast reader does not take is refused instead of re-read slowly (the
# detailed round-trip reader costs about 10 s and 170 MB per MiB).
MAX_DETAILED_BYTES = 1024 * 1024
# Values after alias expansion: a cluster of 8 pools and 20 workloads is about 260, so this admits
# fleets of thousands of clusters and refuses an alias bomb as soon as its size is known.
MAX_NODES = 1_000_000
MAX_DEPTH = 64

# Each input of ``import`` (values, ConfigMaps, ClusterPolicy, nodes). ruamel's round-trip parser reads about
# 100 KB/s: 16 MiB is a node list of a few thousand nodes.
MAX_IMPORT_INPUT_BYTES = 16 * 1024 * 1024
# The same inputs as JSON (``kubectl get -o json``, what ``verify --from`` reads), which the json module parses at
# about 100 MB/s: a pod list of a few thousand nodes.
MAX_JSON_INPUT_BYTES = 128 * 1024 * 1024

# Each file of a rendered folder that ``diff`` reads; larger ones are not ours and are skipped unread.
MAX_RENDERED_FILE_BYTES = 4 * 1024 * 1024
