"""Serialize artifacts to text and write bundles to disk."""

from ..yamlio.writer import dump_yaml
from .bundle import Bundle, Drift, RenderedFile, WriteSummary
from .header import GENERATED_MARKER, header

__all__ = ["GENERATED_MARKER", "Bundle", "Drift", "RenderedFile", "WriteSummary", "dump_yaml", "header"]
