"""Build the intermediate model from a validated manifest: defaults filled, names derived."""

from __future__ import annotations

import base64
import mimetypes
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from mcpgen import identifiers as names
from mcpgen.check import schemas, uritemplate
from mcpgen.load import Document
from mcpgen.model import compact, fastpath, settings
from mcpgen.model import names as assigned
from mcpgen.model.remembered import Advertised, Pack
from mcpgen.model.resources import Prompt, PromptArgument, PromptMessage, Resource, StaticContent
from mcpgen.model.settings import read
from mcpgen.model.types import Capabilities, Completion, Manifest, Origins, Server, Tool
from mcpgen.openapi.result import Merged, Operation

DEFAULT_PAGE_SIZE = 100
EMPTY_INPUT: dict[str, Any] = {"type": "object", "properties": {}}


def build_model(doc: Document, pack: Pack | None = None) -> Manifest:
    """The model of a checked document. ``pack``: earlier builds' results to reuse."""
    data: dict[str, Any] = doc.data
    shared: dict[str, Any] = data.get("$defs", {})
    server = _server(data["server"])
    index = schemas.RefIndex(shared)
    options: dict[str, Any] = data["openapi"] if isinstance(data.get("openapi"), dict) else {}
    diet = compact.CompactOptions.from_manifest(options.get("compact"))
    advertise = Advertised(diet, pack) if diet.enabled else None
    merged = doc.imported or Merged()
    given = assigned.assign(data)
    tools = tuple(
        _tool(t, given.tools[i], index, advertise, merged.tools.get(i))
        for i, t in enumerate(data.get("tools", []))
    )
    resources = tuple(
        _resource(r, given.resources[i], doc.base_dir, index, merged, i)
        for i, r in enumerate(data.get("resources", []))
    )
    prompts = tuple(
        _prompt(p, given.prompts[i], doc.base_dir) for i, p in enumerate(data.get("prompts", []))
    )
    completions = tuple(
        _completion(c, given.completions[i]) for i, c in enumerate(data.get("completions", []))
    )
    caps = data.get("capabilities", {})
    capabilities = Capabilities(
        tools_list_changed=bool(caps.get("tools", {}).get("listChanged", False)),
        resources_list_changed=bool(caps.get("resources", {}).get("listChanged", False)),
        resources_subscribe=bool(
            caps.get("resources", {}).get("subscribe", any(r.subscribe for r in resources))
        ),
        prompts_list_changed=bool(caps.get("prompts", {}).get("listChanged", False)),
        logging=bool(caps.get("logging", True)),
        completions=bool(caps.get("completions", bool(completions))),
        page_size=int(caps.get("pageSize", DEFAULT_PAGE_SIZE)),
    )
    transports = data.get("transports", {})
    limits = options.get("codeMode")
    manifest = Manifest(
        source=doc.file,
        server=server,
        capabilities=capabilities,
        tools=tools,
        resources=resources,
        prompts=prompts,
        completions=completions,
        shared_defs={k: shared[k] for k in sorted(shared)},
        default_transport=transports.get("default", "stdio"),
        transports=tuple(transports.get("offer", settings.OFFERED_TRANSPORTS)),
        http=settings.http_settings(transports.get("http", {}), server.env_prefix),
        auth=settings.auth_settings(
            data.get("auth", {}),
            server.env_prefix,
            {s for part in (tools, resources, prompts) for item in part for s in item.scopes},
        ),
        upstream=merged.upstream,
        # the runtime's code mode ``Limits`` given (the keys in snake_case: ``cpu_seconds``)
        code_mode={names.snake(k): v for k, v in limits.items()} if limits is not None else None,
        deploy=settings.deploy_settings(data.get("deploy"), server.distribution, server.version),
        ci=read(settings.Ci, data.get("ci", {})),
        observability=read(settings.Observability, data.get("observability", {})),
    )
    manifest = replace(manifest, origins=_origins(doc, manifest))
    if manifest.upstream and manifest.upstream.get("mode") == "auto":
        manifest = replace(manifest, upstream=_resolve_mode(manifest))
    return manifest


DEFAULT_CONTEXT_BUDGET = 32 * 1024  # bytes of tools/list that mode auto accepts


def tools_list_bytes(tools: tuple[Tool, ...]) -> int:
    """Bytes of the tools/list result a client receives for ``tools`` (compact JSON)."""
    return tools_list_size(t.wire_json for t in tools if t.enabled)


def tools_list_size(definitions: Iterable[str]) -> int:
    """UTF-8 bytes of the ``{"tools":[...]}`` result made of these compact definitions."""
    return len(('{"tools":[' + ",".join(definitions) + "]}").encode())


def _resolve_mode(manifest: Manifest) -> dict[str, Any]:
    """``mode: auto``: one tool per operation when tools/list fits the budget, else code."""
    upstream = manifest.upstream or {}
    budget = int(upstream.get("contextBudget") or DEFAULT_CONTEXT_BUDGET)
    size = tools_list_bytes(manifest.tools)
    if size <= budget:
        reason = f"tools/list is {size} bytes, within the {budget}-byte budget"
        return {**upstream, "mode": "tools", "modeReason": f"mode auto chose tools: {reason}"}
    reason = (
        f"mode auto chose code: tools/list would be {size} bytes (about {size // 4} tokens), "
        f"over the {budget}-byte budget (openapi.contextBudget); set openapi.mode to change it"
    )
    return {**upstream, "mode": "code", "modeReason": reason}


def _origins(doc: Document, manifest: Manifest) -> Origins:
    paths: dict[str, tuple[str, tuple[str | int, ...]]] = {}
    for name in manifest.shared_defs:
        paths[name] = (f"$defs.{name}", ("$defs", name))
    for index, tool in enumerate(manifest.tools):
        for part, model in (("input", tool.input_model), ("output", tool.output_model)):
            if model and model not in paths:
                paths[model] = (f"tools[{index}].{part}", ("tools", index, part))
    for index, prompt in enumerate(manifest.prompts):
        paths[prompt.class_name] = (f"prompts[{index}].arguments", ("prompts", index, "arguments"))
    return Origins(paths, doc.locate)


def _server(raw: dict[str, Any]) -> Server:
    name = raw["name"]
    return read(
        Server,
        raw,
        package=raw.get("package") or f"{names.snake(name).rstrip('_')}_mcp",
        distribution=raw.get("distribution") or f"{names.kebab(name)}-mcp",
        script=raw.get("script") or names.kebab(name),
        class_prefix=names.class_prefix(name),
    )


def _resolve_root(schema: Any, shared: dict[str, Any]) -> Any:
    """Inline a root-level reference, so clients see an object schema at the top."""
    name = assigned.root_ref(schema, shared)
    if name is None:
        return schema
    return {**shared[name], **{k: v for k, v in schema.items() if k != "$ref"}}


def _tool(
    raw: dict[str, Any],
    named: assigned.Assigned,
    index: schemas.RefIndex,
    advertise: Advertised | None = None,
    http: Operation | None = None,
) -> Tool:
    bundled = index.bundle(_resolve_root(raw.get("input", EMPTY_INPUT), index.shared))
    bundled_output = index.bundle(_resolve_root(raw.get("output"), index.shared))
    annotations = raw.get("annotations") or None
    advertised, keys = None, list[Any]()
    if http is not None and advertise is not None:  # an imported operation
        given = raw.get("title"), raw.get("description"), bundled, bundled_output, annotations
        advertised, keys = advertise(*given, wrapped=http.wrapped_output)
    return read(
        Tool,
        raw,
        input_schema=bundled,
        output_schema=bundled_output,
        annotations=annotations,
        http=http,
        ident=named.ident,
        client_method=str(named.method),
        input_model=named.models[0],
        output_model=named.models[1],
        strict_model_exact=fastpath.strict_model_exact(bundled, index.shared),
        strict_output_exact=fastpath.strict_model_exact(bundled_output, index.shared),
        advertised=advertised,
        schema_keys=tuple(keys[2:4]) or None,
    )


def _inline(raw: dict[str, Any]) -> StaticContent | None:
    """The ``text`` or ``blob`` (base64) content written in the manifest, if any."""
    if "text" in raw:
        return StaticContent("text", raw["text"])
    return StaticContent("blob", raw["blob"]) if "blob" in raw else None


def _read_static(base_dir: Path, relative: str, mime_type: str | None) -> StaticContent:
    data = (base_dir / relative).read_bytes()
    guessed = mime_type or mimetypes.guess_type(relative)[0] or "application/octet-stream"
    if guessed.startswith("text/") or guessed in ("application/json", "application/yaml"):
        try:
            return StaticContent("text", data.decode("utf-8"))
        except UnicodeDecodeError:
            pass
    return StaticContent("blob", base64.b64encode(data).decode("ascii"))


def _resource(
    raw: dict[str, Any],
    named: assigned.Assigned,
    base_dir: Path,
    index: schemas.RefIndex,
    merged: Merged,
    at: int,
) -> Resource:
    """The resource ``raw`` at index ``at`` (``merged``: what an OpenAPI import added)."""
    content = _inline(raw)
    mime_type = raw.get("mimeType")
    if "file" in raw:
        content = _read_static(base_dir, raw["file"], mime_type)
        mime_type = mime_type or mimetypes.guess_type(raw["file"])[0]
    variables = tuple(uritemplate.parse(raw["uriTemplate"])[0]) if "uriTemplate" in raw else ()
    return read(
        Resource,
        raw,
        mime_type=mime_type or ("text/plain" if content and content.kind == "text" else None),
        variables=variables,
        content=content,
        ident=named.ident,
        client_method=str(named.method),
        http=merged.resources.get(at),
        input_schema=index.bundle(merged.resource_inputs.get(at)),
    )


def _prompt(raw: dict[str, Any], named: assigned.Assigned, base_dir: Path) -> Prompt:
    handler = bool(raw.get("handler", False))
    messages = () if handler else tuple(_message(m, base_dir) for m in raw.get("messages", []))
    return read(
        Prompt,
        raw,
        arguments=tuple(read(PromptArgument, a) for a in raw.get("arguments", [])),
        messages=messages,
        ident=named.ident,
        client_method=str(named.method),
        class_name=named.classes[0],
    )


def _message(raw: dict[str, Any], base_dir: Path) -> PromptMessage:
    role = raw["role"]
    if "text" in raw:
        return PromptMessage(role=role, kind="text", text=raw["text"])
    kinds: tuple[Literal["resource", "image", "audio"], ...] = ("resource", "image", "audio")
    kind = next(k for k in kinds if k in raw)
    item = raw[kind]
    if kind == "resource":
        content = _inline(item)
    elif "file" in item:  # an image's or audio's bytes, whatever their type
        content = _read_static(base_dir, item["file"], "application/octet-stream")
    else:
        content = StaticContent("blob", item["data"])
    return PromptMessage(
        role=role, kind=kind, uri=item.get("uri"), mime_type=item.get("mimeType"), content=content
    )


def _completion(raw: dict[str, Any], named: assigned.Assigned) -> Completion:
    target = "prompt" if "prompt" in raw else "resource"
    return read(Completion, raw, target=target, ref=named.ref, ident=named.ident)
