"""Change rules of one backend, a package per backend; the registry in :mod:`gpustack_gen.change.rules` lists them."""
