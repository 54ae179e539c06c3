"""Import an OpenAPI 3.0 / 3.1 or Swagger 2.0 document as MCP tools (``docs/openapi.md``).
``import_openapi`` never raises: broken documents give located ERROR problems, anything
that cannot be represented a located WARNING."""

from __future__ import annotations

from mcpgen.openapi.importer import import_openapi, is_openapi
from mcpgen.openapi.options import OPTIONS_FILE
from mcpgen.openapi.result import BODY_CONTENT_TYPES, Body, OpenAPIImport, Operation, Param

__all__ = [
    "BODY_CONTENT_TYPES",
    "OPTIONS_FILE",
    "Body",
    "OpenAPIImport",
    "Operation",
    "Param",
    "import_openapi",
    "is_openapi",
]
