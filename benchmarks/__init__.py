"""Benchmarks of gpustack-gen: `python -m benchmarks [--quick]` (see benchmarks/RESULTS.md)."""
