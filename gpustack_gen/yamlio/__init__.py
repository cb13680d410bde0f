"""YAML reading and writing machinery, with no knowledge of what the documents mean.

- ``source``: the fleet file, read into plain data with the position of every value, refusing hostile or
  surprising input; ``fast_reader`` is its fast path for ordinary files.
- ``load``: plain ruamel loads for the other inputs (``lint``, ``import``, ``diff``).
- ``writer``: deterministic block-style YAML (``dump_yaml``), and commented documents for people.
- ``edit``: a file edited in place with ruamel's round trip, only where it keeps every other byte.
- ``limits``: what each reader accepts at most.

Nothing is imported here, so that a module can use one part without loading the others.
"""
