"""Serialize artifacts to text and write bundles to disk."""

from .bundle import Bundle, Drift, RenderedFile, WriteSummary
from .header import GENERATED_MARKER, header
from .yaml_text import dump_yaml

__all__ = ["GENERATED_MARKER", "Bundle", "Drift", "RenderedFile", "WriteSummary", "dump_yaml", "header"]
