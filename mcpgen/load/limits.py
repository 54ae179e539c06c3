"""How big, deep and wide an input may be: what a code generator must not trust."""

MAX_MANIFEST_BYTES = 8 * 1024 * 1024
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 128
MAX_NODES = 2_000_000
MAX_INT_DIGITS = 1000  # Python refuses to parse more than 4300 digits anyway
