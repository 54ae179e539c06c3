"""python -m mcpgen"""

from .cli import run

run()
