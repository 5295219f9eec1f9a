"""Each report file is opened once: its format, its taxonomy and its cases come from one
handle (``reports.source``), in every built-in format and on the error path too.

Before, a file was opened two to five times (the sparse-file check, the first 64 KiB for
``claims``, the reader's own read, a second read for the did-you-mean of ``check_fit``, a
zip archive's directory and then each member). Opens are counted at the system call
(``os.open``) and at ``io.open`` (``Path.open``, ``zipfile``), so a reader that opened
the file its own way would be counted too.
"""

from __future__ import annotations

import io
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from helpers import case, category_case, write_jsonl, write_summary

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.reports.builtin import builtin_readers
from pytest_failgate.core.reports.choice import TaxonomyChoice
from pytest_failgate.core.reports.model import Report, ReportFile
from pytest_failgate.core.reports.read import ReadSpec, load_report

DATA = Path(__file__).parents[2] / "data"
SUFFIXES = (".json", ".jsonl", ".eval", ".csv", ".jsonld")
FILES = sorted(p for p in DATA.rglob("*") if p.is_file() and p.suffix in SUFFIXES)


@pytest.fixture
def opens(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times each path is opened, from here on."""
    counted: Counter[str] = Counter()
    os_open, io_open = os.open, io.open

    def counting_os_open(path: Any, *args: Any, **kwargs: Any) -> int:
        counted[os.fspath(path)] += 1
        return os_open(path, *args, **kwargs)

    def counting_io_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(file, int):
            counted[os.fspath(file)] += 1
        return io_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting_os_open)
    monkeypatch.setattr(io, "open", counting_io_open)
    return counted


def _load(path: Path) -> Report | object:
    """The file loaded as a run loads it (every built-in reader), or its error."""
    try:
        return load_report(ReportFile(path, path.stem), TaxonomyChoice(),
                           ReadSpec(readers=builtin_readers()))
    except FailgateError as exc:
        return exc


def test_every_real_report_file_is_opened_once_however_its_format_is_read(
        opens: Counter[str]) -> None:
    formats = set()
    for path in FILES:
        opens.clear()
        loaded = _load(path)
        if isinstance(loaded, Report):
            formats.add(loaded.format)
        assert opens[os.fspath(path)] == 1, (path, loaded)
    assert formats == {reader.name for reader in builtin_readers()}  # every built-in format


def test_own_shapes_and_their_errors_open_the_file_once(tmp_path: Path,
                                                        opens: Counter[str]) -> None:
    cases = [case("a"), category_case("unknown", "b")]
    summary = write_summary(tmp_path / "summary.json", cases)
    lines = write_jsonl(tmp_path / "cases.jsonl", cases)
    # an error's line and column come from the file's bytes, read again after decoding
    broken = write_summary(tmp_path / "broken.json", [case("a"), case("a")])
    loaded = {}
    for path in (summary, lines, broken):
        opens.clear()
        loaded[path] = _load(path)
        assert opens[os.fspath(path)] == 1, (path, loaded[path])
    assert [r.counts["unknown"] for r in (loaded[summary], loaded[lines])
            if isinstance(r, Report)] == [1, 1]
    assert "duplicate case id" in str(loaded[broken])
    assert re.search(r"broken\.json:\d+:\d+: ", str(loaded[broken]))  # placed: bytes read
