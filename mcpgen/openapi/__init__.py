"""Import an OpenAPI 3.0 / 3.1 or Swagger 2.0 document as MCP tools: a pure front-end.

``import_openapi(doc, options)`` turns a loaded document into manifest tool entries (and,
for operations imported ``as: resource``, resource entries), the :class:`Operation` behind
each (how to make the HTTP call), the servers and the security schemes. It never raises:
broken documents give located ERROR problems, anything that cannot be represented a
located WARNING (``field`` is a JSON pointer such as ``#/paths/~1pets/get/requestBody``).

Rules, in the modules that apply them:

- tool and argument names: :mod:`mcpgen.openapi.naming`;
- schema conversion (``$ref`` bundling, ``nullable``, ...): :mod:`mcpgen.openapi.schema`;
- ``include`` / ``exclude`` / ``rules`` / ``overrides``: :mod:`mcpgen.openapi.options`.

Request bodies: the JSON (then form, multipart, text, binary) media type is used. An
object body whose properties are all known (``properties``, no ``additionalProperties``,
no ``allOf``/``oneOf``/...) is spread into the input, except when the body is optional
but has required properties; otherwise the whole body is the ``body`` argument (a
base64 string for binary bodies, a string for text). ``readOnly`` properties of a
spread body are left out; those of a body passed whole are not sent (``Body.read_only``).
Swagger 2.0 ``formData`` parameters are spread.

Responses: the lowest 2xx response (else ``2XX``, else ``default``) is the output. A JSON
object schema is the output schema as is; any other JSON schema is wrapped as
``{result: ...}`` (``Operation.wrapped_output``). Non-JSON responses have no output schema;
``Operation.response_content_type`` says what comes back.

Resources (``as: resource`` / ``as: resourceTemplate``): GET operations without a body
become ``api://<path>`` resources; path parameters become template variables (named by
their argument, percent-encoded where RFC 6570 needs it) and query parameters a
``{?a,b}`` expansion. Anything else stays a tool, with a warning.

Warned about (located WARNING): callbacks; path- and operation-level ``servers``; a
relative first server URL (no host: Swagger 2.0 without ``host``) unless ``baseUrl`` is given;
``webhooks``; header parameters ``Accept``/``Content-Type``/``Authorization``;
``allowReserved``; Swagger ``tsv`` arrays; path parameters not in the path, not declared,
or not ``required``; multipart ``encoding``; XML bodies (sent as raw text); a text or
binary body's schema; a 2xx response whose schema differs from the one used; security
schemes other than apiKey, HTTP basic/bearer and OAuth2 client credentials; requirements
naming unknown schemes; duplicate operationIds; schema keywords that are unknown,
malformed or unsupported (``$id``, ``$anchor``, ``$dynamicRef``...); resource fallbacks;
option rules that match nothing and overrides that match no operation.

Left out without a warning (documentation, or a choice among equivalents): ``x-``
extensions, ``xml``, ``externalDocs``, links, response headers, examples objects other
than their values, alternative media types when a preferred one exists, and ``readOnly``
properties of a request body.
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
