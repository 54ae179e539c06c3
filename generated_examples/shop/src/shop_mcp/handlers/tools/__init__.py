"""Your handler code. mcpgen creates files here once and never overwrites them."""
