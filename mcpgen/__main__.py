"""python -m mcpgen"""

from mcpgen.launch import run

run()
