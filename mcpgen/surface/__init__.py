"""The tool surface clients see: the lock (:mod:`.lock`), its semantic diff (:mod:`.diff`),
OLD and NEW read by :mod:`.sources`, the ``mcpgen diff`` command (:mod:`.report`). Empty:
the command line imports this package at start."""
