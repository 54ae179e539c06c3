"""The tool surface clients see: :mod:`.lock`, :mod:`.diff`, :mod:`.sources`, the ``mcpgen
diff`` command (:mod:`.report`). Empty: the command line imports this package at start."""
