"""Prompts and completions checked against the arguments, resources, prompts and URI
templates they refer to."""

from __future__ import annotations

import jinja2
import jinja2.meta
import jinja2.sandbox as jinja_sandbox
from jinja2 import nodes

from mcpgen.check.checker import Checker
from mcpgen.check.structure import entries
from mcpgen.load import JsonPath
from mcpgen.runtime.templating import sandbox

# attributes the sandbox refuses on some object (any starting with "_" too): refused on all
UNSAFE = {"mro"}.union(
    *(getattr(jinja_sandbox, n) for n in dir(jinja_sandbox) if n.startswith("UNSAFE_"))
)
LITERALS = {"true", "false", "none", "True", "False", "None"}
# a prompt's template stands alone: the sandbox has no other to load
LOADS = (nodes.Include, nodes.Extends, nodes.Import, nodes.FromImport)


def check_prompts(checker: Checker) -> dict[str, set[str]]:
    checker.unique_names("prompts", "prompt", checker.assigned.prompts)
    fixed = [r for _, r in entries(checker.data["resources"]) if "uri" in r]
    scoped = {r["uri"]: set(r.get("scopes") or ()) for r in fixed}  # every fixed URI
    declared: dict[str, set[str]] = {}
    for index, prompt in entries(checker.data["prompts"]):
        where: JsonPath = ("prompts", index)
        arguments = prompt.get("arguments", [])
        checker.unique(arguments, "name", (*where, "arguments"), "argument name")
        argument_names = declared[prompt["name"]] = {a["name"] for a in arguments}
        messages = prompt.get("messages", [])
        if not messages and not prompt.get("handler"):
            checker.error(where, "a prompt needs 'messages', or 'handler: true' to render in code")
        if messages and prompt.get("handler"):
            checker.warn((*where, "messages"), "ignored: the prompt renders in its handler")
        if "description" not in prompt:
            checker.warn(where, f"prompt {prompt['name']!r} has no description")
        for m_index, message in enumerate(messages):
            m_where: JsonPath = (*where, "messages", m_index)
            if "text" in message:
                check_template(checker, (*m_where, "text"), message["text"], argument_names)
            if (resource := message.get("resource")) is not None:
                at, uri = (*m_where, "resource"), resource["uri"]
                inline = [k for k in ("text", "blob") if k in resource]
                if len(inline) > 1:
                    checker.error((*at, "blob"), "give 'text' or 'blob', not both")
                if not inline and uri not in scoped:
                    checker.error(
                        (*at, "uri"),
                        f"{uri!r} is not a declared fixed resource; declare it "
                        "or give inline 'text' or 'blob'",
                    )
                if "blob" in resource:
                    checker.check_base64((*at, "blob"), resource["blob"])
                if uncovered := sorted(scoped.get(uri, set()) - set(prompt.get("scopes") or ())):
                    checker.warn(
                        (*at, "uri"),
                        f"embeds {uri!r}, which needs scope(s) "
                        f"{' '.join(uncovered)} the prompt does not: callers without them "
                        f"are refused the prompt; give it 'scopes: [{', '.join(uncovered)}]'",
                    )
                if "{" in uri:
                    check_template(checker, (*at, "uri"), uri, argument_names)
            for media in (k for k in ("image", "audio") if message.get(k) is not None):
                item = message[media]
                given = [k for k in ("data", "file") if k in item]
                if len(given) != 1:
                    checker.error(
                        (*m_where, media), "give exactly one of 'data' (base64) or 'file'"
                    )
                elif given[0] == "data":
                    checker.check_base64((*m_where, media, "data"), item["data"])
                else:
                    checker.check_file((*m_where, media, "file"), item["file"])
    return declared


def check_template(checker: Checker, where: JsonPath, text: str, allowed: set[str]) -> None:
    try:
        tree = sandbox().parse(text)
        used = jinja2.meta.find_undeclared_variables(tree)
    except jinja2.TemplateSyntaxError as exc:
        checker.error(where, f"template syntax error on line {exc.lineno}: {exc.message}")
        return
    except RecursionError:
        checker.error(where, "template is nested too deeply")
        return
    # Jinja's own names: the template's, and its literals' (an argument so named never shows)
    kept = {n.name for n in tree.find_all(nodes.Name)} & {"self"}
    kept |= {v for _, kind, v in sandbox().lex(text) if kind == "name"} & allowed & LITERALS
    for word in sorted(kept):
        checker.error(
            where,
            f"{word!r} in a template is Jinja's own name (for the template, or a literal), "
            "never an argument: name the argument otherwise",
        )
    for node in tree.find_all((nodes.Getattr, nodes.Getitem, nodes.Filter, *LOADS)):
        if isinstance(node, LOADS):
            kind = "from" if isinstance(node, nodes.FromImport) else type(node).__name__.lower()
            checker.error(
                where, f"'{kind}' on line {node.lineno}: a prompt's template stands alone"
            )
        elif isinstance(name := _attribute(node), str) and (name[:1] == "_" or name in UNSAFE):
            checker.error(
                where,
                f"attribute {name!r} on line {node.lineno}: the prompts' sandbox refuses it "
                "(every template using it fails, or renders it empty)",
            )
    if unknown := sorted(used - allowed):
        shown = ", ".join(repr(u) for u in unknown)
        declared = ", ".join(sorted(allowed)) or "none"
        checker.error(where, f"template uses undeclared argument(s) {shown} (declared: {declared})")


def _attribute(node: nodes.Node) -> object:
    """The attribute ``x.NAME``, ``x['NAME']`` or ``x|attr('NAME')`` reads (else None)."""
    if isinstance(node, nodes.Getattr):
        return node.attr
    key = node.arg if isinstance(node, nodes.Getitem) else None
    if isinstance(node, nodes.Filter) and node.name == "attr" and node.args:
        key = node.args[0]
    return key.value if isinstance(key, nodes.Const) else None


# what a completion names: (the message for no such target, for no such argument of it)
TARGETS = {
    "prompt": ("no prompt named {target!r}", "prompt {target!r} has no argument {argument!r}"),
    "resource": (
        "no resource template with URI template or name {target!r}",
        "URI template {target!r} has no variable {argument!r}",
    ),
}


def check_completions(
    checker: Checker, prompts: dict[str, set[str]], templates: dict[str, list[str]]
) -> None:
    seen: dict[tuple[str, str, str], int] = {}
    for index, completion in entries(checker.data["completions"]):
        where: JsonPath = ("completions", index)
        argument = completion["argument"]
        kind = "prompt" if "prompt" in completion else "resource"
        target, known = completion[kind], prompts if kind == "prompt" else templates
        unknown, missing = TARGETS[kind]
        if target not in known:
            checker.error((*where, kind), unknown.format(target=target))
        elif argument not in known[target]:
            checker.error((*where, "argument"), missing.format(target=target, argument=argument))
        has_values, has_handler = "values" in completion, bool(completion.get("handler"))
        if has_values and has_handler:
            checker.error((*where, "handler"), "give 'values' or 'handler: true', not both")
        elif not has_values and not has_handler:
            checker.error(where, "a completion needs 'values' or 'handler: true'")
        if completion.get("context") and not has_handler:
            checker.error((*where, "context"), "'context: true' needs 'handler: true'")
        key = (kind, target, argument)
        if key in seen:
            checker.error(
                where, f"duplicate completion for {kind} {target!r} argument {argument!r}"
            )
        seen.setdefault(key, index)
