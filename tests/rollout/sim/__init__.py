"""A model of the GPU Operator's controllers that replays a rollout plan and checks it step by step.

The model is written from ``../shared/research/rollout.md``; each rule cites the upstream lines it
models. It never asks gpustack-gen how a node should behave: it reads the rendered files (ConfigMaps,
values, patch, node labels, fragments), the upstream chart defaults and ``gpu-facts.yaml``, and runs the
plan's commands as a shell would. See :mod:`.simulator` for the entry point.
"""
