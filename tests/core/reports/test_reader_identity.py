"""One identity for a reader (``builtin.reader_identity``): a built-in format is the same
reader whether its module was imported eagerly or behind the byte probe; anything else,
however it names itself, is a plugin's reader, named with its code's file."""

from __future__ import annotations

from pathlib import Path

from helpers import reader_classes

from pytest_failgate.core.guard.routes import readers_in_use
from pytest_failgate.core.reports.builtin import (
    BuiltinReader,
    builtin_readers,
    reader_identity,
)
from pytest_failgate.core.reports.readers import as_reader


def test_a_built_in_reader_is_built_in_lazy_or_eager() -> None:
    lazy = [reader for reader in builtin_readers() if isinstance(reader, BuiltinReader)]
    assert {reader_identity(reader) for reader in lazy} == {
        reader_identity(reader.loaded()) for reader in lazy}
    assert all(reader_identity(reader).builtin for reader in lazy)
    assert all(reader_identity(cls()).builtin for cls in reader_classes())


def test_a_reader_posing_as_a_built_in_one_is_a_plugins() -> None:
    [promptfoo] = [cls for cls in reader_classes() if cls.__name__ == "PromptfooReader"]

    class Quieter(promptfoo):  # type: ignore[misc, valid-type]
        """A subclass that drops failures: the built-in's name, not its code."""

    class Copycat:
        name, suffixes = "promptfoo", (".json",)

        def read(self, path: object) -> None:
            return None

    Copycat.__module__ = promptfoo.__module__
    Copycat.__qualname__ = Copycat.__name__ = "PromptfooReader"
    forged = BuiltinReader("promptfoo", "PromptfooReader", "promptfoo", (".json",),
                           "promptfoo", (b"no marker a report holds",))
    for reader in (Quieter(), as_reader(Copycat(), "copycat"), forged):
        identity = reader_identity(reader)
        assert not identity.builtin, reader
        assert identity.name == "promptfoo"
    assert reader_identity(Quieter()).source == __file__


def test_the_guard_is_told_no_built_in_reader_whatever_list_it_is_given(tmp_path: Path) -> None:
    """The CI step's run handed the guard its readers with the built-in ones among them,
    and the guard called ``promptfoo`` a plugin on every run of another tool's reports."""
    report = tmp_path / "results.json"
    report.write_text('{"evalId": "x", "results": {"results": []}}')
    used = {reader.name: report for reader in builtin_readers()}
    eager = [reader.loaded() for reader in builtin_readers()
             if isinstance(reader, BuiltinReader)]
    assert readers_in_use(builtin_readers(), used) == {}
    assert readers_in_use(eager, used) == {}
