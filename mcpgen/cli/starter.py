"""The manifest ``mcpgen init`` writes, and where a build goes when no ``-o`` is given."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from mcpgen import identifiers as names

# Latin letters with no decomposed form, which NFKD would not turn into ASCII
LETTERS = str.maketrans(
    {"ß": "ss", "æ": "ae", "Æ": "Ae", "ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d"}
    | {"Đ": "D", "ð": "d", "Ð": "D", "þ": "th", "Þ": "Th", "œ": "oe", "Œ": "Oe", "\u0131": "i"}
)


def starter_manifest(server_name: str) -> str:
    from importlib import resources

    from mcpgen.render.templates import render

    # accents are dropped, not their letters (``Café`` is ``cafe``, ``Straße`` ``strasse``)
    plain = unicodedata.normalize("NFKD", server_name.translate(LETTERS))
    plain = plain.encode("ascii", "ignore").decode()
    words = names.words(plain) or ["my", "server"]
    name = "-".join(words) if words[0][0].isalpha() else "-".join(["mcp", *words])
    title = " ".join(word.capitalize() for word in words)
    # the manifest's JSON Schema as installed with mcpgen (what ``mcpgen schema`` prints)
    schema = Path(str(resources.files("mcpgen").joinpath("schema/manifest.schema.json")))
    return render("starter/mcpgen.yaml.jinja", name=name, title=title, schema=schema.as_posix())


def default_output(source: Path, server_name: str) -> Path:
    """The output folder when none is given (``build`` and ``dev``): a project here, in here
    or beside ``source`` whose ``[tool.mcpgen] source`` names it, else ``./<server name>``."""
    import tomllib

    wanted = source.resolve()
    for base in dict.fromkeys([Path("."), source.parent]):
        try:
            children = sorted(p for p in base.iterdir() if (p / "pyproject.toml").is_file())
        except OSError:
            continue
        for child in [base, *children] if (base / "pyproject.toml").is_file() else children:
            try:
                data = tomllib.loads((child / "pyproject.toml").read_text("utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue
            recorded = data.get("tool", {}).get("mcpgen", {}).get("source")
            if isinstance(recorded, str) and (child / recorded).resolve() == wanted:
                return child
    return Path(names.kebab(server_name))
