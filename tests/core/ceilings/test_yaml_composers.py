"""libyaml composes the node trees that PyYAML's composer does, or none at all.

``core.base.yamlsource`` composes with libyaml when it is installed and falls back to
PyYAML's pure-Python composer wherever libyaml refuses the text, so a file must never be
read differently by the two: same tags, values, styles and marks on every YAML file of the
project and on the awkward ones below (where libyaml refuses, PyYAML's reading and error
stand).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import EXAMPLES

from pytest_failgate.core.base import yamlsource
from pytest_failgate.core.base.errors import FailgateError

ROOT = EXAMPLES.parent
FILES = sorted(path for pattern in ("*.y*ml", ".*.y*ml", "*/**/*.y*ml")
               for path in ROOT.glob(pattern)
               if not {".git", "build", ".venv"} & set(path.relative_to(ROOT).parts))
# the YAML written in the documentation: ceilings files, taxonomies, CI steps
DOCS = [block for page in sorted((ROOT / "docs").rglob("*.md"))
        for block in re.findall(r"```ya?ml\n(.*?)```", page.read_text(encoding="utf-8"),
                                re.DOTALL)]
AWKWARD = [
    "a: 1\nb: [x, 'y', \"z\"]\n",
    "# é 한국어 😀\nkey: \"é😀\"\nnum: 12\nlist: [a, é, 3]\n",
    "a: &x [1, 2]\nb: *x\n",
    "a: 1\na: 2\n",
    "text: |\n  two\n  lines\nfolded: >\n  one\n  line\n",
    "a:\n\t- 1\n",
    "a: b: c\n",
    "[1, 2\n",
    "---\na: 1\n---\nb: 2\n",
    "",
    "a: '\x07'\n",
    "a: \ufeff1\n",
    "? [complex, key]\n: value\n",
    "a: !!python/object:os.system x\n",
    "a: 010\nb: 1:00\nc: 7_0\nd: 0.05\ne: .inf\n",
    "%YAML 1.1\n---\na: 1\n",
    "a: {b: [c, {d: e}]}\n",
    "- " * 1200 + "x\n",
    "a: 1\r\nb:\r\n  - 2\r\n",
    "a: 1\rb: 2\r",
    "a: x\x85b: 2\n",
    "a: x\u2028y\nb: 'q\u2029r'\n",
    "a: \"\\ud800\"\n",
    "a: \"tab\\there\"\nb: '  spaced  '\n",
    "a:    # comment\n  b: 1   # more\n",
    "x:\n" + "  - " * 198 + "1\n",  # as deep as the reader goes
    "x:\n" + "  - " * 199 + "1\n",  # a level deeper
    "[" * 250 + "]" * 250 + "\n",
    "a: &x [1, [2, [3]]]\n" + "".join(f"b{i}: [*x, *x]\n" for i in range(50)),
]


def tree(node: Any) -> Any:
    """A node tree as plain data, with every mark."""
    marks = tuple((m.index, m.line, m.column) for m in (node.start_mark, node.end_mark))
    if isinstance(node, yaml.ScalarNode):
        return ("scalar", node.tag, node.value, node.style or None, marks)
    if isinstance(node, yaml.MappingNode):
        return ("map", node.tag, [(tree(k), tree(v)) for k, v in node.value], marks)
    return ("seq", node.tag, [tree(v) for v in node.value], marks)


def test_the_project_has_yaml_files_to_compare() -> None:
    assert len(FILES) >= 20
    assert len(DOCS) >= 5


@pytest.mark.parametrize("text", [path.read_text(encoding="utf-8") for path in FILES]
                         + DOCS + AWKWARD)
def test_libyaml_composes_the_trees_pyyaml_composes_or_leaves_the_text_to_it(
    text: str
) -> None:
    path = Path("file.yaml")
    composed = yamlsource._c_nodes(text, None)
    try:
        expected = [tree(n) for n in yamlsource._python_nodes(path, text, None)]
    except FailgateError:
        assert composed is None  # PyYAML refuses: libyaml must not have read it
        return
    if composed is not None:
        assert [tree(n) for n in composed] == expected


def test_an_alias_where_aliases_are_refused_is_left_to_pyyaml_for_its_error() -> None:
    text = "a: &x 1\nb: *x\n"
    assert yamlsource._c_nodes(text, "no") is None
    assert yamlsource._c_nodes(text, None) is not None
    with pytest.raises(FailgateError, match="aliases") as raised:
        yamlsource.load_yaml(Path("c.yaml"), text, aliases="no")
    assert (raised.value.line, raised.value.col) == (2, 4)


def test_libyaml_reads_the_project_files() -> None:
    """Not a vacuous comparison: libyaml composes every file of the project."""
    assert [path for path in FILES
            if yamlsource._c_nodes(path.read_text(encoding="utf-8"), None) is None] == []
    assert sum(yamlsource._c_nodes(block, None) is not None for block in DOCS) >= 5


@pytest.mark.parametrize("text", ["", "version: 1\n", "# é 한국어 😀\nceilings: {total: 3}\n"])
def test_a_files_digest_is_its_texts_sha256(text: str) -> None:
    """Computed without hashlib (OpenSSL's import), the digest is SHA-256 all the same."""
    import hashlib

    assert yamlsource.digest(text) == hashlib.sha256(text.encode("utf-8")).hexdigest()
