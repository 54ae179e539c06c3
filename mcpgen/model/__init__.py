"""The typed, immutable model every later stage (render, write, surface) reads."""
