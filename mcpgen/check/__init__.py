"""Checking the whole raw document: its structure (``structure``), then ``semantics``."""
