"""mcpgen: generate typed Model Context Protocol servers and clients from a manifest."""

__version__ = "0.2.0"
