"""``mcpgen build --rename OLD=NEW``: the user's handler follows a renamed item; refusals
write nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from surface_projects import HANDLERS, SHOP_SPEC, build, cli, edit, shelf

from mcpgen.write.rename import rename_names

pytestmark = pytest.mark.timeout(300)


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_a_renamed_tool_keeps_its_handler(tmp_path: Path) -> None:
    manifest, project = shelf(tmp_path)
    old = project / HANDLERS / "tools/add_book.py"
    written = old.read_text()
    edit(manifest, "- name: add_book", "- name: shelve-book")
    output = build(manifest, project, "--rename", "add_book=shelve-book")
    new = project / HANDLERS / "tools/shelve_book.py"
    assert not old.exists() and new.is_file()
    text = new.read_text()
    # the model classes derived from the name follow it; the user's code is kept
    assert text == (
        written.replace("AddBookInput", "ShelveBookInput")
        .replace("AddBookOutput", "ShelveBookOutput")
        .replace("Handler for the add_book tool.", "Handler for the shelve-book tool.")
    )
    assert "args.title.strip()" in text and "AddBook" not in text
    assert f"renamed: {HANDLERS}/tools/add_book.py -> {HANDLERS}/tools/shelve_book.py" in output
    assert "new stub" not in output and "orphaned" not in output
    assert cli("build", manifest, "-o", project, "--check")[0] == 0


def test_without_rename_the_old_handler_is_an_orphan_and_the_new_one_a_stub(
    tmp_path: Path,
) -> None:
    manifest, project = shelf(tmp_path)
    edit(manifest, "- name: add_book", "- name: shelve_book")
    output = build(manifest, project)
    assert f"new stub: {HANDLERS}/tools/shelve_book.py" in output
    assert f"orphaned (kept, no longer in the manifest): {HANDLERS}/tools/add_book.py" in output


def test_a_forgotten_rename_is_hinted_and_can_be_done_later(tmp_path: Path) -> None:
    manifest, project = shelf(tmp_path)
    written = (project / HANDLERS / "tools/add_book.py").read_text()
    edit(manifest, "- name: add_book", "- name: shelve_book")
    output = build(manifest, project)  # --rename forgotten
    assert "breaking: tool:add_book: renamed to shelve_book" in output
    assert (
        "hint: tool add_book was renamed to shelve_book; move its handler to the new stub "
        f"with: mcpgen build {manifest} -o {project} --rename add_book=shelve_book"
    ) in output
    # the new stub is untouched: the rename is done now, the stub replaced by the handler
    later = build(manifest, project, "--rename", "add_book=shelve_book")
    assert f"renamed: {HANDLERS}/tools/add_book.py -> {HANDLERS}/tools/shelve_book.py" in later
    moved = (project / HANDLERS / "tools/shelve_book.py").read_text()
    assert "args.title.strip()" in moved and "ShelveBookInput" in moved and "AddBook" not in moved
    assert moved.startswith('"""Handler for the shelve_book tool.')
    assert not (project / HANDLERS / "tools/add_book.py").exists()
    assert written != moved and "orphaned" not in later


def test_prompt_and_resource_renames(tmp_path: Path) -> None:
    manifest, project = shelf(tmp_path)
    edit(manifest, "- name: review", "- name: critique")
    edit(manifest, "name: book\n", "name: volume\n")
    build(manifest, project, "--rename", "prompt:review=critique", "--rename", "book=volume")
    prompt = (project / HANDLERS / "prompts/critique.py").read_text()
    assert "CritiqueArguments" in prompt and "ReviewArguments" not in prompt
    assert "args.book" in prompt  # an argument named like the old resource is not touched
    assert prompt.startswith('"""Renders the critique prompt.')
    resource = (project / HANDLERS / "resources/volume.py").read_text()
    assert "return f'book {id}'" in resource
    assert not (project / HANDLERS / "prompts/review.py").exists()
    assert not (project / HANDLERS / "resources/book.py").exists()


@pytest.mark.parametrize(
    ("renames", "message"),
    [
        (["add_book=shelve_book", "add_book=shelve_book"], "exists already"),
        (["nothing=shelve_book"], "tools/nothing.py does not exist"),
        (["add_book=no_such_tool"], "has no tool, resource or prompt 'no_such_tool'"),
        (["count_books=shelve_book"], "'count_books' is still a tool of the manifest"),
        (["add_book"], "expected OLD=NEW"),
        (["widget:add_book=shelve_book"], "expected OLD=NEW or KIND:OLD=NEW"),
        (["prompt:add_book=shelve_book"], "has no prompt 'shelve_book'"),
    ],
)
def test_refusals_write_nothing(tmp_path: Path, renames: list[str], message: str) -> None:
    manifest, project = shelf(tmp_path)
    edit(manifest, "- name: add_book", "- name: shelve_book")
    before = tree(project)
    args = [a for r in renames for a in ("--rename", r)]
    code, output = cli("build", manifest, "-o", project, *args)
    assert code == 2, output
    assert message in output
    assert tree(project) == before


def test_the_target_exists(tmp_path: Path) -> None:
    manifest, project = shelf(tmp_path)
    edit(manifest, "- name: add_book", "- name: shelve_book")
    build(manifest, project)  # the new stub is written; then the user starts on it
    stub = project / HANDLERS / "tools/shelve_book.py"
    stub.write_text(stub.read_text() + "# mine\n")
    before = tree(project)
    code, output = cli("build", manifest, "-o", project, "--rename", "add_book=shelve_book")
    assert code == 2 and "shelve_book.py exists already and is not the untouched stub" in output
    assert tree(project) == before


def test_rename_is_refused_with_check(tmp_path: Path) -> None:
    manifest, project = shelf(tmp_path, written=False)
    code, output = cli("build", manifest, "-o", project, "--check", "--rename", "a=b")
    assert code == 2 and "without --check" in output


def test_an_override_of_an_imported_operation_moves(tmp_path: Path) -> None:
    (tmp_path / "shop.yaml").write_text(SHOP_SPEC.read_text())
    manifest = tmp_path / "mcpgen.yaml"
    manifest.write_text("mcpgen: 1\nserver: {name: shop}\nopenapi: {source: shop.yaml}\n")
    project = tmp_path / "project"
    build(manifest, project)
    tools = project / "src/shop_mcp/handlers/tools"
    override = tools / "list_items.py"
    override.write_text("async def handle(arguments, ctx):\n    return 'mine'\n")
    # the operation is renamed in the spec: its override follows it
    spec = tmp_path / "shop.yaml"
    spec.write_text(spec.read_text().replace("operationId: listItems", "operationId: browse"))
    output = build(manifest, project, "--rename", "list_items=browse")
    assert not override.exists()
    assert (tools / "browse.py").read_text().endswith("return 'mine'\n")
    assert "orphaned" not in output


def test_rename_names_touches_python_names_only() -> None:
    source = (
        '"""OldInput in a docstring."""\n'
        "from ...models import OldInput, OldOutput  # OldInput\n"
        "x: OldInput = OldInput(a=1)\n"
        "y = thing.OldInput\n"
        "z = 'OldInput'\n"
        "OldInputs = OldOutput\n"
    )
    result = rename_names(source, {"OldInput": "NewInput", "OldOutput": "NewOutput"})
    assert result == (
        '"""OldInput in a docstring."""\n'
        "from ...models import NewInput, NewOutput  # OldInput\n"
        "x: NewInput = NewInput(a=1)\n"
        "y = thing.OldInput\n"
        "z = 'OldInput'\n"
        "OldInputs = NewOutput\n"
    )
    assert rename_names("def (:\n  'unterminated", {"x": "y"}) == "def (:\n  'unterminated"
