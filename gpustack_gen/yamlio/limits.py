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
# Values a YAML input other than the fleet may hold once its aliases are expanded (``load.py``): a node list of a
# few thousand nodes is about a million; an alias bomb of nine lines is hundreds of millions.
MAX_INPUT_VALUES = 4_000_000

# Each input of ``import`` (values, ConfigMaps, ClusterPolicy, nodes). ruamel's round-trip parser reads about
# 100 KB/s: 16 MiB is a node list of a few thousand nodes.
MAX_IMPORT_INPUT_BYTES = 16 * 1024 * 1024
# The same inputs as JSON (``kubectl get -o json``, what ``verify --from`` reads), which the json module parses at
# about 100 MB/s: a pod list of a few thousand nodes.
MAX_JSON_INPUT_BYTES = 128 * 1024 * 1024

# Each file of a rendered folder that ``diff`` reads; larger ones are not ours and are skipped unread.
MAX_RENDERED_FILE_BYTES = 4 * 1024 * 1024


def value_error_reason(error: ValueError) -> str:
    """What a ValueError from parsing says, in a message's words.

    ``int()`` refuses strings of more than 4300 digits (python/cpython@v3.11.7 Include/internal/pycore_long.h:29),
    and the json module and YAML constructors raise its plain ``ValueError``.
    """
    text = " ".join(str(error).split())
    return "an integer of more than 4,300 digits" if "integer string conversion" in text else text[:200]
