"""The tool surface clients see: the lock (``mcp-surface.json``) and its semantic diff.

- :mod:`.lock`: ``surface(manifest)`` and ``dumps(lock)``, the canonical lock file;
- :mod:`.diff`: ``diff(old, new)``, every change classified breaking / compatible / docs
  (server, capabilities, collections, renames), built from :mod:`.changes` (what a change
  is, the reasons), :mod:`.hints` (annotations) and :mod:`.schema_diff` (schemas by what
  they accept; :mod:`.schema_base` and :mod:`.schema_rules` hold its single-keyword rules
  and pure helpers);
- :mod:`.sources`: OLD and NEW from files, folders, manifests, specs and ``git:REF:PATH``;
- :mod:`.report` and :mod:`.command`: the ``mcpgen diff`` command and its formats.

Import from those modules: the command line imports this package at start, so it stays
empty.
"""
