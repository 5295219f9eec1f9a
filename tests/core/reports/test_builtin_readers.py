"""The built-in readers' table: a row per reader, its module imported only when a file's
head passes the row's probe, and then the reader's own ``claims`` decides."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import EXAMPLES, reader_classes

from pytest_failgate.core.reports import deepeval, promptfoo, ragrun
from pytest_failgate.core.reports.builtin import BUILTIN, BuiltinReader, builtin_readers

ROOT = EXAMPLES.parent
DATA = ROOT / "tests" / "data"
READERS = [reader for reader in builtin_readers() if isinstance(reader, BuiltinReader)]
FILES = sorted(path for folder in (DATA, EXAMPLES) for path in folder.rglob("*")
               if path.is_file())


def head_of(path: Path) -> bytes:
    """A file's head as detection offers it to the readers: 64 KiB, without a BOM."""
    with path.open("rb") as handle:
        return handle.read(65536).removeprefix(b"\xef\xbb\xbf")


def test_each_row_names_its_readers_class_name_suffixes_and_taxonomy() -> None:
    # every reader class of the package has its row, and every row is one of them
    assert {type(reader.loaded()) for reader in READERS} == reader_classes()
    assert len(READERS) == len(BUILTIN) == len({row[2] for row in BUILTIN})
    for reader in READERS:
        loaded = reader.loaded()
        assert type(loaded).__name__ == reader.cls
        assert (loaded.name, loaded.suffixes, loaded.taxonomy) == (
            reader.name, reader.suffixes, reader.taxonomy)
        assert reader.loaded() is loaded  # imported and built once


def test_the_probes_written_as_marker_lists_are_the_readers_own() -> None:
    probes = {reader.name: reader.probe for reader in READERS}
    assert probes["rag-gate"] == ragrun.RagRunReader.MARKERS
    assert probes["deepeval"] == deepeval._MARKERS
    assert probes["promptfoo"] == promptfoo._MARKERS


def test_on_every_real_report_the_probe_and_the_reader_claim_alike() -> None:
    """The probe never refuses a head its reader claims, on every file of the test data
    and the examples; each reader claims some of them."""
    claimed = dict.fromkeys((reader.name for reader in READERS), 0)
    for path in FILES:
        head = head_of(path)
        for reader in READERS:
            if path.suffix not in reader.suffixes:
                continue
            says = reader.loaded().claims(head)
            assert BuiltinReader(*_row(reader.name)).claims(head) == says, (path, reader.name)
            claimed[reader.name] += says
    assert [name for name, count in claimed.items() if count == 0] == []


def _row(name: str) -> tuple[str, str, str, tuple[str, ...], str, tuple[bytes, ...] | None]:
    return next(row for row in BUILTIN if row[2] == name)


@pytest.mark.parametrize("report", [
    EXAMPLES / "reports" / "eval_summary.json",
    DATA / "lm_eval" / "samples_math_perturbed_full_2026-01-21T03-44-18.458309.jsonl",
])
def test_a_run_imports_only_the_readers_whose_probe_the_report_passes(
    report: Path, tmp_path: Path
) -> None:
    script = ("import sys\n"
              "from pytest_failgate.cli import main\n"
              "print('CODE', main(['show', sys.argv[1]]))\n"
              "print('LOADED', *sorted(m.rsplit('.', 1)[1] for m in sys.modules\n"
              "                        if m.startswith('pytest_failgate.core.reports.')))\n")
    done = subprocess.run([sys.executable, "-c", script, str(report)], capture_output=True,
                          text=True, check=False, cwd=tmp_path)
    assert "CODE 0" in done.stdout, done.stdout + done.stderr
    loaded = set(done.stdout.split("LOADED ", 1)[1].split())
    head = head_of(report)
    passing = {row[0] for row in BUILTIN if report.suffix in row[3]
               and (row[5] is None or any(marker in head for marker in row[5]))}
    modules = {row[0] for row in BUILTIN}
    assert loaded & modules <= passing < modules
    assert "zipzstd" not in loaded  # the .eval archives' reader is not imported for JSON
