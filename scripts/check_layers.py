"""Check the import layers on clperf as it installs: the import-linter contracts in pyproject.toml, and
that every import of a clperf module is at a module's top, where a reader sees it.

The source folders map to import names (``server/`` is ``clperf.server``, see
``[tool.setuptools.package-dir]``) and import-linter reads one folder per top-level package, so the
modules are first copied into a temporary tree laid out by import name, which is then linted.

Only the heavy libraries and the modules that load torch (``LAZY``) may be imported inside a function, so
that the language server and a command that does not train answer before they load; and the two entry
points that must check ``sys.path`` before they import anything else.

    .venv/bin/python scripts/check_layers.py
"""

from __future__ import annotations

import ast
import os
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the heavy libraries, and the clperf modules that import torch at their top (the network and the
# training loop)
LAZY = ("torch", "pyopencl", "llvmlite", "pygls", "lsprotocol", "ray", "clperf.predictor.model.network",
        *(f"clperf.predictor.training.{m}" for m in ("train", "fit", "predict", "evaluate")))
ENTRY_POINTS = ("clperf/cli/__init__.py", "server/cli.py")  # safe-path check first (docs/security.md)


def import_tree(out: Path) -> None:
    """Every package's ``.py`` files under ``out``, at the path their import name gives."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = config.get("package-dir", {})
    for package in config["packages"]:
        source = ROOT / folders.get(package, package.replace(".", "/"))
        target = out.joinpath(*package.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for f in source.glob("*.py"):
            shutil.copy2(f, target / f.name)


def inner_imports() -> list[str]:
    """``file:line: module`` for each import of a clperf module inside a function, class or ``if`` (other
    than ``if TYPE_CHECKING:``), outside the entry points."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {ROOT / config.get("package-dir", {}).get(p, p.replace(".", "/")) for p in config["packages"]}
    out = []
    for folder in sorted(folders):
        for f in sorted(folder.glob("*.py")):
            rel = f.relative_to(ROOT).as_posix()
            if rel in ENTRY_POINTS:
                continue
            tree = ast.parse(f.read_text())
            top = {id(n) for n in tree.body}
            for block in tree.body:  # imports for annotations only
                if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test):
                    top |= {id(n) for n in block.body}
            for node in ast.walk(tree):
                if not isinstance(node, ast.Import | ast.ImportFrom) or id(node) in top:
                    continue
                if isinstance(node, ast.ImportFrom):
                    module = ("clperf." if node.level else "") + (node.module or "")
                    names = [f"{module}.{a.name}" for a in node.names]
                else:
                    names = [a.name for a in node.names]
                for name in names:
                    if name.startswith("clperf") and not name.startswith(LAZY):
                        out.append(f"{rel}:{node.lineno}: {name}")
    return out


def main() -> int:
    inner = inner_imports()
    for line in inner:
        print(f"import of a clperf module inside a function: {line}")
    from importlinter.cli import lint_imports

    with tempfile.TemporaryDirectory(prefix="clperf-layers-") as tmp:
        import_tree(Path(tmp))
        sys.path.insert(0, tmp)
        os.chdir(tmp)  # import-linter puts the current folder first on sys.path: the repository's clperf/
        linted = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True)
    return linted or (1 if inner else 0)


if __name__ == "__main__":
    sys.exit(main())
