"""docs/design.md's "Where each fact lives" names places that exist: each `file` (`NAME`)
it cites defines NAME, so the table cannot go on naming a place a change moved away."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _defined(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):  # a package's own names
            names |= {alias.asname or alias.name for alias in node.names}
    return names


def test_every_place_the_design_names_defines_what_it_names() -> None:
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    start = text.index("## Where each fact lives")
    section = text[start:text.index("\n## ", start + 1)]
    checked = 0
    for found in re.finditer(r"`([\w/]+(?:\.py)?)` \(((?:`[\w.]+`(?:, )?)+)", section):
        where = ROOT / "pytest_failgate" / found.group(1)
        if not where.suffix:
            where = where / "__init__.py"
        if not where.exists():  # a repository file (pyproject.toml): not Python
            assert (ROOT / found.group(1)).exists(), found.group(1)
            continue
        for name in re.findall(r"`([\w.]+)`", found.group(2)):
            assert name.split(".")[0] in _defined(where), (found.group(1), name)
            checked += 1
    assert checked > 10
