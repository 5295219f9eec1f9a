"""Where a case or a top-level value sits in a JSON report, for error messages only.

The decoders keep no positions (that is part of why they are fast), so when a
case turns out to be wrong the file is walked again up to it with ``json``'s
C scanner. This runs once, on the error path, over a document already known to
be valid JSON.
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from json.scanner import make_scanner

from ..base.errors import line_col

_scan_once = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
_WS = re.compile(r"[ \t\n\r]*")


def _skip_ws(text: str, index: int) -> int:
    found = _WS.match(text, index)
    assert found is not None  # matches the empty string
    return found.end()


def _value_of(text: str, index: int, key: str) -> int | None:
    """Where the value of ``key`` (its last occurrence) starts in the object at ``index``."""
    found = None
    index = _skip_ws(text, index + 1)
    while text.startswith('"', index):
        name, index = scanstring(text, index + 1)
        index = _skip_ws(text, _skip_ws(text, index) + 1)  # past the ':'
        if name == key:
            found = index
        index = _skip_ws(text, _scan_once(text, index)[1])
        if not text.startswith(",", index):
            break
        index = _skip_ws(text, index + 1)
    return found


def place(data: bytes, path: tuple[str | int, ...]) -> tuple[int | None, int | None]:
    """1-based line and column of the value at ``path`` (keys and 0-based indexes).

    ``(None, None)`` if the walk fails (the decoders accept a few documents ``json``
    cannot walk, such as nesting beyond Python's recursion limit).
    """
    try:
        text = data.decode("utf-8", "surrogatepass")
        index = _skip_ws(text, 0)
        for step in path:
            if isinstance(step, str):
                found = _value_of(text, index, step)
                if found is None:
                    return None, None
                index = found
                continue
            index = _skip_ws(text, index + 1)
            for _ in range(step):
                index = _skip_ws(text, _scan_once(text, index)[1])
                index = _skip_ws(text, index + 1)  # past the ','
    except (ValueError, RecursionError, StopIteration):
        return None, None
    return line_col(text, index)

