"""Checking the whole raw document: its structure against the published schema, then what
a schema cannot say (names, references, files, templates)."""
