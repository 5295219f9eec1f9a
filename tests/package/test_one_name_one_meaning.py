"""One meaning per name: no two public classes of the package share a name (two
``NoiseResult`` records, two ``HistoryPoint`` classes once meant different things)."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_failgate"
CLASS = re.compile(r"^\s*class ([A-Za-z]\w*)\b", re.MULTILINE)


def test_no_two_public_classes_share_a_name() -> None:
    defined: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        for name in CLASS.findall(path.read_text(encoding="utf-8")):
            defined[name].append(str(path.relative_to(PACKAGE)))
    assert {name: where for name, where in defined.items() if len(where) > 1} == {}
