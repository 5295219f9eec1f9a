"""A gold labels file's syntax: the file -> its header and its rows, each with its line.

The one reader of the labels format, shared by the gate (``labels.read_labels``, which
then checks the rows against the run they correct) and the guard (``guard.labelled``,
which compares the file at two git refs and so must read it without the run's reports).
Two formats, told apart by the file's suffix:

- **JSON Lines** (any suffix but ``.csv``): an optional header line written by
  ``failgate sample`` (``{"seed": S, "n": K, "run": "<digest>", ...}``; today's plain
  ``{"seed": S}`` too), then one object a line: ``{"id": ..., "category": ...}`` with
  ``report`` (the case's report, when the run has several), ``content`` (the digest of
  the case's content the label was made on) and ``note`` optional. A line with ``content``
  but no ``category`` is a drawn case not labelled yet.
- **CSV**: a header row naming the columns (``id``, ``category``; ``report``, ``content``,
  ``note`` optional), then a case a row. An empty ``category`` cell is a case that passes
  (CSV has no null); a CSV file has no seed header.

Every problem is one ``FailgateError`` naming the file, the line (and where it can, the
column): a bad byte by its line and column, an unknown key or column by name, a case
listed twice, a number too large, nesting too deep.
"""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING, Any

from ..base.classes import dataclass
from ..base.errors import FailgateError, did_you_mean

if TYPE_CHECKING:
    from pathlib import Path

LABEL_KEYS = ("id", "category", "report", "content", "note")
# what ``failgate sample`` writes on the first line (``seed`` is the one a header needs)
HEADER_KEYS = ("seed", "n", "of", "run", "drawn_by", "reports", "categories", "how_to_label")
CSV_COLUMNS = ("id", "category", "report", "content", "note")
REQUIRED = ("id", "category")
CSV_SUFFIX = ".csv"


@dataclass(frozen=True)
class LabelRow:
    """One case's line: its report (None: not named), id, true category (None: passes),
    whether it is labelled at all, the content digest it was made on, and its line."""

    report: str | None
    id: str
    category: str | None
    labelled: bool
    content: str | None
    line: int


@dataclass(frozen=True)
class Header:
    """What the sample drew from: the seed, the sample's size and the run's case-set
    digest (``n`` and ``run`` None in a plain ``{"seed": S}`` header)."""

    seed: int
    n: int | None
    run: str | None
    line: int


@dataclass(frozen=True)
class LabelFile:
    """A labels file as written: its header (None: none) and its rows, in file order."""

    path: Path
    header: Header | None
    rows: tuple[LabelRow, ...]

    @property
    def labelled(self) -> tuple[LabelRow, ...]:
        """The rows that carry a label (a drawn case's line left blank does not)."""
        return tuple(row for row in self.rows if row.labelled)


def parse_labels(data: bytes, path: Path) -> LabelFile:
    """The labels file's header and rows (module docstring); errors name file and line."""
    text = _text(data, path)
    if text.startswith("\ufeff"):
        text = text[1:]
    if path.suffix.lower() == CSV_SUFFIX:
        header, rows = None, _csv_rows(text, path)
    else:
        header, rows = _jsonl_rows(text, path)
    seen: dict[tuple[str, str], int] = {}
    for row in rows:
        key = (row.report or "", row.id)
        first = seen.setdefault(key, row.line)
        if first != row.line:
            raise FailgateError(f"case '{row.id[:80]}' is labelled twice (first on line "
                                f"{first}); label each case once", path, row.line)
    return LabelFile(path, header, tuple(rows))


def _text(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        col = len(data[start:exc.start].decode("utf-8", errors="replace")) + 1
        raise FailgateError(f"not UTF-8 text (byte 0x{data[exc.start]:02x})", path, line,
                            col) from None


def _jsonl_rows(text: str, path: Path) -> tuple[Header | None, list[LabelRow]]:
    header: Header | None = None
    rows: list[LabelRow] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        item = _object(line, path, number)
        if "id" not in item and "seed" in item and not rows and header is None:
            header = _header(item, path, number)
            continue
        rows.append(_row(item, path, number))
    return header, rows


def _object(line: str, path: Path, number: int) -> dict[str, Any]:
    try:
        item = json.loads(line)
    except json.JSONDecodeError as exc:
        raise FailgateError(f"not JSON: {exc.msg}", path, number, exc.colno) from None
    except RecursionError:
        raise FailgateError("not JSON: nested too deeply", path, number) from None
    except ValueError:  # an integer past Python's 4,300 digits
        raise FailgateError("not JSON: a number too large to read (integers are limited to "
                            "4,300 digits)", path, number) from None
    if not isinstance(item, dict):
        raise FailgateError('a label is a JSON object: {"id": "...", "category": "..."} '
                            'or {"id": "...", "category": null}', path, number)
    return item


def _header(item: dict[str, Any], path: Path, number: int) -> Header:
    extra = [key for key in item if key not in HEADER_KEYS]
    if extra:
        raise FailgateError(f"unknown key '{extra[0][:80]}' in the header"
                            f"{did_you_mean(extra[0], HEADER_KEYS)}", path, number)
    seed = _integer(item["seed"], "the seed", path, number)
    n = item.get("n")
    if n is not None:
        n = _integer(n, "n (the sample's size)", path, number)
        if n < 1:
            raise FailgateError(f"n is the sample's size, at least 1, not {n}", path, number)
    run = item.get("run")
    if run is not None and not isinstance(run, str):
        raise FailgateError("run is the digest `failgate sample` wrote (a string)", path,
                            number)
    return Header(seed, n, run, number)


def _integer(value: Any, what: str, path: Path, number: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FailgateError(f"{what} is an integer, not {json.dumps(value)[:40]}", path,
                            number)
    return value


def _row(item: dict[str, Any], path: Path, number: int) -> LabelRow:
    """One JSON line as a case's row (errors name the line)."""
    extra = [key for key in item if key not in LABEL_KEYS]
    if extra:
        raise FailgateError(f"unknown key '{extra[0][:80]}'{did_you_mean(extra[0], LABEL_KEYS)}",
                            path, number)
    content = item.get("content")
    if content is not None and not isinstance(content, str):
        raise FailgateError("content is the case's digest `failgate sample` wrote (a string)",
                            path, number)
    content = content or None  # (empty: the sample kept no digest of the case)
    missing = [key for key in REQUIRED if key not in item]
    if missing and not (missing == ["category"] and content is not None):
        raise FailgateError(f"a label needs '{missing[0]}' (category null: the case passes)",
                            path, number)
    case = item["id"]
    if isinstance(case, int) and not isinstance(case, bool):
        case = str(case)
    if not isinstance(case, str):
        raise FailgateError("the id is a string: the case's id in the report", path, number)
    category = item.get("category")
    if category is not None and not isinstance(category, str):
        raise FailgateError("the category is a category's name, or null for a case that "
                            "passes", path, number)
    report = item.get("report")
    if report is not None and not isinstance(report, str):
        raise FailgateError(f"report {json.dumps(report)[:60]} is not a report's name", path,
                            number)
    return LabelRow(report, case, category, "category" in item, content, number)


def _csv_rows(text: str, path: Path) -> list[LabelRow]:
    """A CSV file's rows; its first row names the columns."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[LabelRow] = []
    columns: list[str] | None = None
    try:
        for cells in reader:
            number = reader.line_num
            if not cells or all(not cell.strip() for cell in cells):
                continue
            if columns is None:
                columns = _csv_header(cells, path, number)
                continue
            if len(cells) != len(columns):
                raise FailgateError(f"{len(cells)} cells where the header names "
                                    f"{len(columns)} ({', '.join(columns)})", path, number)
            row = dict(zip(columns, cells, strict=True))
            if not row["id"]:
                raise FailgateError("the id cell is empty: the case's id in the report", path,
                                    number)
            rows.append(LabelRow(row.get("report") or None, row["id"], row["category"] or None,
                            True, row.get("content") or None, number))
    except csv.Error as exc:
        raise FailgateError(f"not CSV: {exc}", path, reader.line_num) from None
    return rows


def _csv_header(cells: list[str], path: Path, number: int) -> list[str]:
    columns = [cell.strip() for cell in cells]
    col = 1
    for index, name in enumerate(columns):
        if name not in CSV_COLUMNS:
            raise FailgateError(f"unknown column '{name[:80]}' in the header"
                                f"{did_you_mean(name, CSV_COLUMNS)} (the header is "
                                "id,category[,report])", path, number, col)
        if name in columns[:index]:
            raise FailgateError(f"the column '{name}' is named twice", path, number, col)
        col += len(cells[index]) + 1
    missing = [name for name in REQUIRED if name not in columns]
    if missing:
        raise FailgateError(f"the header names no '{missing[0]}' column (the header is "
                            "id,category[,report]; the first row names the columns)", path,
                            number)
    return columns
