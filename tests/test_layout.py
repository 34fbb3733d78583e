"""The package's layout rules (docs/style.md, issue 35): modules small enough to read, private names kept
private, and the project's own paths found in one place (`gpu_ledger.project`)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "gpu_ledger"
MAX_LINES = 500
# `streamlit run` puts gpu_ledger/app/ on sys.path, not src/: the script finds the package's folder
# before it can import anything of it, so it cannot ask gpu_ledger.project
WALKS_ALLOWED = ("project.py", "app/streamlit_app.py")


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_module_is_longer_than_500_lines():
    long = {
        str(path.relative_to(PACKAGE)): lines
        for path in _modules()
        if (lines := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_no_module_imports_another_modules_private_names():
    """`from gpu_ledger.x import _name`, or `x._name` on a project module imported as `x`: a name another
    module needs belongs in a shared module, under a public name (docs/style.md)."""
    found = []
    for path in _modules():
        tree = ast.parse(path.read_text())
        here = _name(path)
        modules = {}  # local name -> project module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gpu_ledger"):
                for alias in node.names:
                    if _private(alias.name) and node.module != here:
                        found.append(f"{path.relative_to(PACKAGE)}: from {node.module} import {alias.name}")
                    modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("gpu_ledger"):
                        modules[alias.asname or alias.name] = alias.name
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and _private(node.attr)
                and isinstance(node.value, ast.Name)
                and node.value.id in modules
                and (PACKAGE.parent / (modules[node.value.id].replace(".", "/") + ".py")).exists()
            ):
                found.append(f"{path.relative_to(PACKAGE)}: {node.value.id}.{node.attr}")
    assert found == []


def test_only_gpu_ledger_project_walks_up_to_find_the_project():
    walks = [
        str(path.relative_to(PACKAGE))
        for path in _modules()
        if "parents[" in path.read_text() and str(path.relative_to(PACKAGE)) not in WALKS_ALLOWED
    ]
    assert walks == []


def test_the_layout_rules_find_what_they_look_for():
    """The rules above are not vacuous: the names they look for are spelled as the code spells them."""
    assert any(path.name == "project.py" for path in _modules())
    assert "parents[" in (PACKAGE / "project.py").read_text()
    assert len(_modules()) > 50
    assert _name(PACKAGE / "cli" / "__init__.py") == "gpu_ledger.cli"
    assert _private("_walk") and not _private("__version__") and not _private("walk")
