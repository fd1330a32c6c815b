"""core/ knows nothing of Discord, Slack, the adapters or the bot."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO

FORBIDDEN = {"discord", "slack_bolt", "slack_sdk", "adapters", "bot"}


def test_no_module_in_core_imports_an_outer_layer() -> None:
    offenders = []
    for path in sorted((REPO / "core").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            offenders += [f"{path.relative_to(REPO)}: {n}" for n in names if n.split(".")[0] in FORBIDDEN]
    assert offenders == []


def test_importing_the_whole_core_loads_no_platform_or_outer_module() -> None:
    modules = sorted(
        "core." + ".".join(p.relative_to(REPO / "core").with_suffix("").parts)
        for p in (REPO / "core").rglob("*.py")
        if p.name != "__init__.py"
    )
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {FORBIDDEN!r}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stderr


def test_adapters_never_import_the_bot() -> None:
    offenders = []
    for path in sorted((REPO / "adapters").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "bot":
                offenders.append(str(path.relative_to(REPO)))
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "bot" for a in node.names):
                offenders.append(str(path.relative_to(REPO)))
    assert offenders == []


def test_the_core_package_exports_what_it_says() -> None:
    import core

    assert len(core.__all__) == len(set(core.__all__))
    for name in core.__all__:
        assert hasattr(core, name), name
    assert Path(core.__file__).parent == REPO / "core"
