"""The security schemes of an OpenAPI document, normalized, and each operation's
requirements (``docs/security.md``); others (HTTP digest, mutual TLS...) dropped, warned."""

from __future__ import annotations

from typing import Any

from mcpgen.load import JsonPath
from mcpgen.openapi.parts import ImportBase
from mcpgen.runtime.credential_config import SchemeSource, env_name, env_suffixes

Json = Any
USER_SOURCES = ("tokenExchange", "header")  # sources that can serve a scheme with no own token
# what the server reads for the wrapped API itself (``<PREFIX>_TIMEOUT``, runtime/upstream.py)
UPSTREAM_VARIABLES = ("BASE_URL", "TIMEOUT", "RETRIES", "MAX_RESPONSE_BYTES", "MAX_FILE_BYTES")


class SecurityImport(ImportBase):
    def operation_security(
        self, src: int, path: JsonPath, node: dict[str, Any]
    ) -> list[dict[str, list[str]]]:
        """An operation's security alternatives (its own ``security``, else the document's)."""
        if "security" in node:
            path, raw = (*path, "security"), node["security"]
        else:
            src, path, raw = 0, ("security",), self.data.get("security", [])
        result: list[dict[str, list[str]]] = []
        schemes = self.raw_schemes()[1]
        known = set(schemes) if isinstance(schemes, dict) else set()
        for index, requirement in enumerate(self.listing(src, path, raw, "'security'")):
            if not isinstance(requirement, dict):
                self.error(src, (*path, index), "a security requirement must be a mapping")
                continue
            entry: dict[str, list[str]] = {}
            for name, scopes in requirement.items():
                if name not in known:
                    self.warn(src, (*path, index, name), f"no security scheme named {name!r}")
                scopes = scopes if isinstance(scopes, list) else []
                entry[name] = [s for s in scopes if isinstance(s, str)]
            result.append(entry)
        return result

    def raw_schemes(self) -> tuple[JsonPath, Any]:
        if self.version == "2.0":
            return ("securityDefinitions",), self.data.get("securityDefinitions")
        components = self.data.get("components")
        raw = components.get("securitySchemes") if isinstance(components, dict) else None
        return ("components", "securitySchemes"), raw

    def security_schemes(self) -> dict[str, dict[str, Json]]:
        path, raw = self.raw_schemes()
        result: dict[str, dict[str, Json]] = {}
        # each variable after the prefix, and who reads it: one scheme, or the server itself
        readers = dict.fromkeys(UPSTREAM_VARIABLES, "the server itself (the wrapped API's)")
        for name, value in self.mapping(0, path, raw, "security schemes").items():
            followed = self.follow_mapping(0, (*path, name), value, "a security scheme")
            if followed is None:
                continue
            ssrc, spath, scheme = followed
            normalized = self.security_scheme(ssrc, spath, scheme, str(name))
            if normalized is not None:
                if isinstance(scheme.get("description"), str):
                    normalized["description"] = scheme["description"]
                result[name] = normalized
                source = self.configured(name).get("from", "env")
                who = f"security scheme {name!r}"
                for suffix, _, _ in env_suffixes(SchemeSource(name, source, normalized)):
                    variable = env_name(str(name)) + suffix
                    first = readers.setdefault(variable, who)
                    if first != who:
                        self.error(
                            0,
                            (*path, name),
                            f"{who} would read the environment variable ..._{variable}, "
                            f"which {first} reads too: rename the scheme",
                        )
        return result

    def configured(self, name: str) -> dict[str, Any]:
        credentials = (self.raw_options or {}).get("credentials")
        entry = credentials.get(name) if isinstance(credentials, dict) else None
        return entry if isinstance(entry, dict) else {}

    def no_own_token(self, src: int, path: JsonPath, name: str, what: str) -> None:
        if self.configured(name).get("from") in USER_SOURCES:
            return
        self.warn(
            src,
            path,
            f"{what} gives this server no token of its own (only client credentials does): "
            f"operations that need {name!r} fail until the environment variable "
            f"..._{env_name(name)} (the README names it in full) holds an access token got "
            f"out of band (sent as a bearer token), or openapi.credentials.{name} sets "
            "from: tokenExchange (each caller's token, exchanged) or from: header",
        )

    def security_scheme(
        self, src: int, path: JsonPath, scheme: dict[str, Any], name: str
    ) -> dict[str, Json] | None:
        kind = scheme.get("type")
        if kind == "apiKey":
            where, key = scheme.get("in"), scheme.get("name")
            if where not in ("query", "header", "cookie") or not isinstance(key, str):
                message = "an apiKey scheme needs 'name' and 'in' (query, header, cookie)"
                self.error(src, path, message)
                return None
            return {"type": "apiKey", "in": where, "name": key}
        if kind == "basic":  # Swagger 2.0
            return {"type": "http", "scheme": "basic"}
        if kind == "http":
            scheme_name = str(scheme.get("scheme", "")).lower()
            if scheme_name not in ("bearer", "basic"):
                message = f"HTTP {scheme_name!r} authentication is not supported"
                self.warn(src, (*path, "scheme"), message)
                return None
            result: dict[str, Json] = {"type": "http", "scheme": scheme_name}
            if scheme_name == "bearer" and isinstance(scheme.get("bearerFormat"), str):
                result["bearerFormat"] = scheme["bearerFormat"]
            return result
        if kind == "oauth2":
            return self.oauth2(src, path, scheme, name)
        if kind == "openIdConnect":
            self.no_own_token(src, path, name, "an openIdConnect scheme")
            url = scheme.get("openIdConnectUrl")
            return {
                "type": "openIdConnect",
                **({"openIdConnectUrl": url} if isinstance(url, str) else {}),
            }
        self.warn(src, path, f"security scheme type {kind!r} is not supported")
        return None

    def oauth2(
        self, src: int, path: JsonPath, scheme: dict[str, Any], name: str
    ) -> dict[str, Json] | None:
        flows: dict[str, Any]
        if self.version == "2.0":
            flow_name = scheme.get("flow")
            flows = {flow_name: scheme} if isinstance(flow_name, str) else {}
        else:
            flows = scheme["flows"] if isinstance(scheme.get("flows"), dict) else {}
        flow = flows.get("application" if self.version == "2.0" else "clientCredentials")
        if isinstance(flow, dict):  # the server can get a token of its own
            token_url = flow.get("tokenUrl")
            if not isinstance(token_url, str):
                self.error(src, path, "an OAuth2 client-credentials flow needs 'tokenUrl'")
                return None
            return {"type": "oauth2", "tokenUrl": token_url, "scopes": _scopes(flow)}
        names = sorted(str(n) for n, f in flows.items() if isinstance(f, dict))
        if not names:
            self.warn(src, path, "an OAuth2 scheme needs at least one flow")
            return None
        listed = ", ".join(repr(n) for n in names)
        self.no_own_token(src, path, name, f"OAuth2 flow {listed}")
        scopes = {k: v for flow_name in names for k, v in _scopes(flows[flow_name]).items()}
        return {"type": "oauth2", "flows": names, "scopes": scopes}


def _scopes(flow: dict[str, Any]) -> dict[str, str]:
    scopes = flow.get("scopes") or {}
    return {str(k): str(v) for k, v in scopes.items()} if isinstance(scopes, dict) else {}
