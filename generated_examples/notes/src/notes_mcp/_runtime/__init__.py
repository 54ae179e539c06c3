"""The runtime every generated server runs: plain Python, copied verbatim into each package.

A build copies this folder byte for byte into ``src/<package>/_runtime/``; nothing in it
is rendered from a template and nothing in it imports the generator. What differs between
servers lives in the generated ``_spec.json`` and ``server.py``.
"""

RUNTIME_VERSION = "0.2.0"
