"""The tool surface clients see: the lock (``mcp-surface.json``) and its semantic diff.

- :mod:`.lock`: ``surface(manifest)`` and ``dumps(lock)``, the canonical lock file;
- :mod:`.diff`: ``diff(old, new)``, every change classified breaking / compatible / docs;
- :mod:`.sources`: OLD and NEW from files, folders, manifests, specs and ``git:REF:PATH``;
- :mod:`.report` and :mod:`.command`: the ``mcpgen diff`` command and its formats.

Import from those modules: the command line imports this package at start, so it stays
empty.
"""
