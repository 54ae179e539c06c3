"""python -m mcpgen"""

from .launch import run

run()
