"""Python names checked: every name generated code derives from the manifest (the rules
are in ``mcpgen.identifiers``; the model derives the same) against the others in its
namespace."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpgen import identifiers as names
from mcpgen.check import uritemplate
from mcpgen.check.view import entries
from mcpgen.load import JsonPath

if TYPE_CHECKING:
    from mcpgen.check.semantics import Checker


def check_python_names(checker: Checker) -> None:
    """Every Python name generated code derives from the manifest, checked against the
    others in the same namespace: the typed client's methods, a resource's or prompt's
    keyword arguments, the model classes, the completion handlers."""
    methods: dict[str, JsonPath] = {}

    def claim(table: dict[str, JsonPath], name: str, where: JsonPath, what: str) -> None:
        first = table.setdefault(name, where)
        if first != where:
            checker.error(
                where,
                f"{what} {name!r} is also the name of {checker.doc.field(first)}; rename one",
            )

    tools = list(entries(checker.named.get("tools", [])))
    idents: dict[str, JsonPath] = {}
    for index, tool in tools:
        if isinstance(tool.get("name"), str):
            ident = names.tool_ident(tool["name"])
            if idents.setdefault(ident, ("tools", index)) != ("tools", index):
                continue  # two tools with one Python name: reported by unique_idents
            method = names.client_method(ident)
            claim(methods, method, ("tools", index, "name"), "the typed client's method")
    for index, resource in entries(checker.named.get("resources", [])):
        if isinstance(resource.get("name"), str):
            method = "read_" + names.snake(resource["name"])
            claim(methods, method, ("resources", index, "name"), "the typed client's method")
        template = resource.get("uriTemplate")
        if isinstance(template, str):
            variables, problem = uritemplate.parse(template)
            if problem is None:
                checker.distinct_kwargs(variables, ("resources", index, "uriTemplate"), "variables")
    classes: dict[str, JsonPath] = {
        name: ("$defs", name) for name in checker.named.get("$defs", {})
    }
    for index, prompt in entries(checker.named.get("prompts", [])):
        if not isinstance(prompt.get("name"), str):
            continue
        claim(
            methods,
            "prompt_" + names.snake(prompt["name"]),
            ("prompts", index, "name"),
            "the typed client's method",
        )
        claim(
            classes,
            names.model_class(prompt["name"], "Arguments"),
            ("prompts", index, "name"),
            "model class",
        )
        arguments = [
            a["name"] for a in prompt.get("arguments", []) if isinstance(a, dict) and "name" in a
        ]
        checker.distinct_kwargs(arguments, ("prompts", index, "arguments"), "arguments")
    for index, tool in tools:
        if isinstance(tool.get("name"), str):
            classes.setdefault(names.model_class(tool["name"], "Input"), ("tools", index, "name"))
    handlers: dict[str, JsonPath] = {}
    for index, completion in entries(checker.named.get("completions", [])):
        target = "prompt" if "prompt" in completion else "resource"
        ref = str(completion.get(target, ""))
        ident = names.completion_ident(target, ref, str(completion.get("argument", "")))
        claim(handlers, ident, ("completions", index), "completion handler")


def class_name_problem(name: str) -> str:
    """Why a shared definition's name cannot be its model class's name, and a better one."""
    better = names.pascal(name)
    if not names.kept_class_name(better):
        better += "Model"
    if name in names.RESERVED_CLASS_NAMES:
        why = "is a Python keyword or a name the models module imports"
    else:
        why = "is not a class name in PascalCase (a capital letter, then letters and digits)"
    return (
        f"shared definition {name!r} {why}: its model class would get another name; "
        f"call it {better!r}"
    )
