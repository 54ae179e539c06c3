"""The README's two commands in order: the quickstart installs a freshly built (stub)
``calculator-mcp`` into ``.venv`` (editable) and puts its ``calculator`` script there; the
test command then runs mcpgen's tests in that same venv. The host tests that pick a
launcher must still run the project they were given, not the installed stub copy.

The venv is made the cheap way (no network): a ``pyvenv.cfg`` over this interpreter, a
``.pth`` reaching this interpreter's site-packages, the stub build's ``src`` on a ``.pth``
(what an editable install writes) and its console script in ``bin``."""

from __future__ import annotations

import os
import site
import subprocess
import sys
from pathlib import Path

import pytest
from hostkit import ROOT, mcpgen

pytestmark = pytest.mark.timeout(300)
AFFECTED = [
    "tests/hosts/test_hosts_call.py::test_a_freshly_built_project_is_called_from_its_source",
    "tests/hosts/test_hosts_install.py::test_launcher_kinds",
    "tests/hosts/test_hosts_install.py::test_a_host_starts_the_server_from_the_written_config",
]


def quickstart_venv(where: Path, stub: Path) -> Path:
    """A venv sharing this interpreter's packages, with ``stub`` installed as -e would."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    base = Path(getattr(sys, "_base_executable", sys.executable))
    packages = where / "lib" / version / "site-packages"
    packages.mkdir(parents=True)
    (where / "bin").mkdir()
    (where / "pyvenv.cfg").write_text(
        f"home = {base.parent}\ninclude-system-site-packages = false\n"
        f"version = {sys.version_info.major}.{sys.version_info.minor}\n"
    )
    (where / "bin" / "python").symlink_to(base)
    shared = "; ".join(f"site.addsitedir({p!r})" for p in site.getsitepackages())
    (packages / "zz_shared.pth").write_text(f"import site; {shared}\n")
    (packages / "_calculator_mcp.pth").write_text(f"{stub / 'src'}\n")
    script = where / "bin" / "calculator"
    script.write_text(
        f"#!{where / 'bin' / 'python'}\nimport sys\n"
        "from calculator_mcp.__main__ import main\nsys.exit(main())\n"
    )
    script.chmod(0o755)
    return where / "bin" / "python"


@pytest.mark.slow
def test_the_host_tests_pass_with_the_quickstart_installed_in_their_venv(tmp_path: Path) -> None:
    stub = tmp_path / "calculator"
    built = mcpgen("build", str(ROOT / "manifests" / "calculator.yaml"), "-o", str(stub))
    assert built.returncode == 0, built.stderr
    python = quickstart_venv(tmp_path / "venv", stub)
    check = subprocess.run(
        [str(python), "-c", "import calculator_mcp; print(calculator_mcp.__file__)"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert check.stdout.startswith(str(stub)), check.stderr  # the stub copy is installed
    env = {
        **os.environ,
        "PATH": f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "VIRTUAL_ENV": str(python.parent.parent),
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *AFFECTED],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=280, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
