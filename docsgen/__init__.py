"""The documentation site's generated pages and its runnable examples (used by mkdocs' hooks and the tests)."""
