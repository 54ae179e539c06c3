"""Your handler code. mcpgen creates files here once and never overwrites them."""

# The document store the tools share: in memory, per process. A real server would use a
# database with its own credentials; a client's token is never passed on to it.
DOCUMENTS: dict[str, str] = {"welcome": "Documents here are readable with docs.read."}
