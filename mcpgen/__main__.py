"""python -m mcpgen"""

from mcpgen.cli import run

run()
