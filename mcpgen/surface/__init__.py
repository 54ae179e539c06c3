"""The tool surface clients see: the lock (``mcp-surface.json``, :mod:`.lock`) and its
semantic diff (:mod:`.diff`; schemas compared by what they accept in :mod:`.schema_diff`).
:mod:`.sources` reads OLD and NEW, :mod:`.report` is the ``mcpgen diff`` command.

Import from those modules: the command line imports this package at start, so it stays
empty.
"""
