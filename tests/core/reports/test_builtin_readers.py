"""The built-in readers' table: a row per reader, its module imported only when a file's
head passes the row's probe, and then the reader's own ``claims`` decides."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import EXAMPLES, reader_classes

from pytest_failgate.core.reports import builtin, deepeval, promptfoo, ragrun
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


def test_the_probes_are_the_readers_own_and_the_rows_the_classes_statements() -> None:
    """``BUILTIN`` is what the classes of ``MODULES`` say, as the generator writes it."""
    probes = {reader.name: reader.probe for reader in READERS}
    assert probes["rag-gate"] == ragrun.RagRunReader.MARKERS
    assert probes["deepeval"] == deepeval._MARKERS
    assert probes["promptfoo"] == promptfoo._MARKERS
    assert builtin.stated() == BUILTIN
    text = Path(builtin.__file__).read_text(encoding="utf-8")
    assert builtin.source() in text, "run python -m pytest_failgate.core.reports.builtin"


FAKE = """\
from pytest_failgate.core.reports.readers import Reader, ReaderOutput


class FakeReader(Reader):
    name = "fake-format"
    suffixes = (".fake",)
    taxonomy = "rag"
    probe = (b"fake-format",)

    def claims(self, head):
        return head.startswith(b"fake-format")

    def read(self, path):
        lines = path.read_text(encoding="utf-8").splitlines()[1:]
        return ReaderOutput(cases=[{"id": line, "accuracy": 1.0} for line in lines])
"""


def test_a_new_reader_module_is_one_entry_of_the_registry_and_every_consumer_takes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fake format: its module listed in ``MODULES``, the rows generated again; the gate
    reads its file, the guard knows it as built-in, and a file of another format leaves
    its module unimported (the probe)."""
    import importlib.util

    from pytest_failgate.core.gate.runner import load_run_or_raise
    from pytest_failgate.core.reports.builtin import reader_identity
    from pytest_failgate.core.reports.choice import TaxonomyChoice

    code = tmp_path / "fake_format.py"
    code.write_text(FAKE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"{builtin.__package__}.fake_format", code)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    monkeypatch.setattr(builtin, "MODULES", (*builtin.MODULES, "fake_format"))
    monkeypatch.setattr(builtin, "BUILTIN", builtin.stated())
    readers = {reader.name: reader for reader in builtin_readers()}
    assert readers["fake-format"].suffixes == (".fake",)
    assert reader_identity(readers["fake-format"]).builtin
    assert reader_identity(module.FakeReader()).builtin
    report = tmp_path / "run.fake"
    report.write_text("fake-format\nq1\nq2\n", encoding="utf-8")
    [loaded] = load_run_or_raise((report,), TaxonomyChoice(), None, "python")
    assert loaded.n_cases == 2
    assert not readers["fake-format"].claims(b'{"other": 1}')  # the probe, not the module


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


def _row(name: str) -> builtin.Row:
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
