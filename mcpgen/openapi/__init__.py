"""Import an OpenAPI 3.0 / 3.1 or Swagger 2.0 document as MCP tools: a pure front-end.

``import_openapi(doc, options)`` turns a loaded document into manifest tool entries (and,
for operations imported ``as: resource``, resource entries), the :class:`Operation` behind
each (how to make the HTTP call), the servers and the security schemes. It never raises:
broken documents give located ERROR problems, anything that cannot be represented a
located WARNING (``field`` is a JSON pointer such as ``#/paths/~1pets/get/requestBody``).

Rules, in the modules that apply them: tool and argument names in :mod:`.naming`; schema
conversion in :mod:`.schema`; ``include`` / ``exclude`` / ``rules`` / ``overrides`` and
resources in :mod:`.options`; parameters, bodies and responses in :mod:`.inputs` (each
kind's arguments and wire form: ``docs/openapi.md``). The output is the lowest 2xx
response's (else ``2XX``, else ``default``); a JSON schema that is not an object is wrapped
as ``{result: ...}`` (``Operation.wrapped_output``).

Left out without a warning (documentation, or a choice among equivalents): ``x-``
extensions, ``xml``, ``externalDocs``, links, response headers, examples objects other
than their values, alternative media types when a preferred one exists, and ``readOnly``
properties of a request body. Anything else not imported is warned about where it is.
"""

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
