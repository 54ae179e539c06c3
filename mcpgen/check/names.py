"""Python names checked: every name generated code derives from the manifest."""

from __future__ import annotations

from mcpgen import identifiers as names
from mcpgen.check import uritemplate
from mcpgen.check.checker import Checker
from mcpgen.load import JsonPath, dotted
from mcpgen.model.names import Names


def check_python_names(checker: Checker) -> None:
    """Every Python name the model assigns (``checker.assigned``) against the others in its
    namespace: client methods, keyword arguments, model classes."""
    assigned = checker.assigned
    methods: dict[str, JsonPath] = {}
    for section in (assigned.tools, assigned.resources, assigned.prompts):
        idents: set[str] = set()
        for found in section.values():
            if found.ident in idents:  # two with one Python name: see unique_names
                continue
            idents.add(found.ident)
            where, method = (*found.path, "name"), str(found.method)
            first = methods.setdefault(method, where)
            if first != where:
                checker.error(
                    where,
                    f"the typed client's method {method!r} is also the name of "
                    f"{checker.doc.field(first)}; rename one",
                )
    for index in assigned.resources:
        template = checker.named["resources"][index].get("uriTemplate")
        if isinstance(template, str):
            variables, problem = uritemplate.parse(template)
            if problem is None:
                checker.distinct_kwargs(variables, ("resources", index, "uriTemplate"), "variables")
    for index in assigned.prompts:
        given = checker.named["prompts"][index].get("arguments")
        arguments = [
            a["name"]
            for a in (given if isinstance(given, list) else [])
            if isinstance(a, dict) and isinstance(a.get("name"), str)
        ]
        checker.distinct_kwargs(arguments, ("prompts", index, "arguments"), "arguments")
    check_classes(checker, assigned)
    for found in assigned.tools.values():
        for at in found.shadowing:  # ("tools", index, part, "$defs", name)
            own, name = checker.named["tools"][at[1]][at[2]][at[3]][at[4]], str(at[4])
            if own != checker.named["$defs"][name]:
                checker.error(
                    at,
                    f"the tool's own definition {name!r} differs from the shared definition "
                    f"{name!r}: its typed model would be the shared one; rename one",
                )


def check_classes(checker: Checker, assigned: Names) -> None:
    """Every model class of a tool or prompt against the shared definitions' and each other's."""
    classes: dict[str, tuple[JsonPath, str | None]] = {
        name: (("$defs", name), None) for name in checker.named.get("$defs", {})
    }
    for found in (*assigned.tools.values(), *assigned.prompts.values()):
        where: JsonPath = (*found.path, "name")
        section, index = found.path
        name = checker.named[str(section)][index]["name"]
        key = f"{section}:{found.ident}"
        for model, at in (*((m, where) for m in found.classes), *found.defs):
            first, other = classes.setdefault(model, (at, key))
            if first == at or other == key:
                continue
            if section == "tools":
                message = f"model class {model!r} for tool {name!r} collides with {dotted(first)}"
            else:
                message = (
                    f"model class {model!r} is also the name of {checker.doc.field(first)}; "
                    "rename one"
                )
            checker.error(at, message)


def class_name_problem(name: str) -> str:
    """Why a shared definition's name cannot be its model class's name, and a better one."""
    better = names.pascal(name)
    if not names.kept_class_name(better):
        better += "Model"
    if name in names.RESERVED_CLASS_NAMES:
        why = "is a Python keyword or a name generated code imports next to model classes"
    else:
        why = "is not a class name in PascalCase (a capital letter, then letters and digits)"
    return (
        f"shared definition {name!r} {why}: its model class would get another name; "
        f"call it {better!r}"
    )


# past the line length black and ruff format lay out a model's field each its own way
MOST_PROPERTY_NAME = 64


def model_name_problem(name: str, key: str) -> str | None:
    """Why a property or definition name cannot be the name of a model's field or class."""
    python = names.python_reading(name)
    if python != name:
        return (
            f"Python reads {name!r} as {python!r} (Unicode NFKC): the model's field or "
            "class would not match it"
        )
    if key == "properties" and len(name) > MOST_PROPERTY_NAME:
        return f"property name is {len(name)} characters long; the limit is {MOST_PROPERTY_NAME}"
    return None
