"""A report's content never reaches an output as a character that rewrites or reorders
what a reader sees: terminal escape sequences (clear the screen, a hyperlink), line
breaks (CR, LF, U+2028, U+0085) that split a table's row, and the bidirectional controls
that show ``abc<U+202E>dcba.exe`` as ``abcexe.abcd``. Every output shows each of them as
its visible escape (``\\x1b``, ``\\r``, ``\\u202e``): the terminal summary of ``failgate
check`` and of pytest, ``failgate analyze``, the Markdown comment (rendered as GitHub reads
it), the HTML page and the GitHub annotations.

The report's case ids, slice values, answers and errors each carry one such character;
the taxonomy reads the answer and the error, so the HTML page shows them as the fields
its rules read.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from helpers import gate_in_pytest, run_cli
from markdown_it import MarkdownIt

from pytest_failgate.core.base.formatting import one_line

BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068",
        "\u2069", "\u200e", "\u200f", "\u061c"]
# Each raw character, inside a value made to exploit it.
HOSTILE = [
    "abc\u202edcba.exe",  # first, so it is among every output's first cases
    "\x1b[2J\x1b[31mRED\x1b[0m",  # clear the screen, colour
    "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\",  # an OSC-8 hyperlink
    "cr\r::warning::cr",
    "lf\n::error::lf",
    "ls\u2028::error::ls",
    "nel\x85::error::nel",
    *(f"abc{mark}dcba.exe" for mark in BIDI if mark != "\u202e"),
]
# What must never be shown raw; a line feed is the outputs' own line break, so it is
# checked by the value showing whole on one line instead.
RAW = re.compile("[\x1b\r\u2028\x85" + "".join(BIDI) + "]")

CEILINGS = """\
version: 1
taxonomy:
  name: t
  failed: score < 0.5
  categories:
    - {name: no_docs, when: empty(docs) and len(answer) > 0 and len(error) > 0}
    - name: other
ceilings: {no_docs: 1, other: 0}
slices: [slice]
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cases = [{"id": value, "score": 0.1, "docs": [], "slice": value, "answer": value,
              "error": value} for value in HOSTILE]
    cases += [{"id": f"ok{n}", "score": 0.9, "docs": ["a"], "slice": "plain", "answer": "a",
               "error": None} for n in range(5)]
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "run.jsonl").write_text(
        "".join(json.dumps(case) + "\n" for case in cases), encoding="utf-8")
    (tmp_path / "ceilings.yaml").write_text(CEILINGS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return tmp_path


def assert_no_raw_control(text: str) -> None:
    found = sorted({f"U+{ord(char):04X}" for char in RAW.findall(text)})
    assert not found, found


def assert_each_slice_on_one_line(text: str) -> None:
    """Each slice's row of the summary table shows its value whole, escaped, on its line."""
    lines = text.splitlines()
    for value in HOSTILE:
        label = one_line(f"slice={value}::no_docs")
        assert any(line.lstrip().startswith(label) for line in lines), label


def test_the_check_summary_shows_controls_as_escapes(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "check", "reports")
    assert code == 1  # no_docs: 18 cases over a ceiling of 1
    assert_no_raw_control(out + err)
    assert_each_slice_on_one_line(out)
    assert one_line(HOSTILE[0]) in out  # the failing item's first cases
    assert "abc\\u202edcba.exe" in out


@pytest.mark.heavy
def test_the_pytest_summary_shows_controls_as_escapes(
    pytester: pytest.Pytester, project: Path
) -> None:
    result = gate_in_pytest(pytester, project)
    shown = "\n".join(result.outlines + result.errlines)
    assert_no_raw_control(shown)
    assert_each_slice_on_one_line(shown)
    result.stdout.fnmatch_lines(["FAILED *ceilings.yaml::run::no_docs*"])


def test_analyze_shows_slice_values_as_escapes(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "analyze", "reports", "--slice", "slice")
    assert code == 0
    assert_no_raw_control(out + err)
    lines = out.splitlines()
    shown = [value for value in HOSTILE
             if any(line.lstrip().startswith(one_line(f"slice={value} ")) for line in lines)]
    assert shown  # the weakest slices, each whole on its line
    assert all(not line.lstrip().startswith(("::", "RED", "link", "dcba")) for line in lines)


class _Cells(HTMLParser):
    """Rendered Markdown: the text of each table cell's code spans, and all the text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self.text: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def test_the_markdown_shows_controls_as_escapes_and_names_each_slice(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_cli(capsys, "check", "reports", "--md", "gate.md")
    markdown = Path("gate.md").read_text(encoding="utf-8")
    assert_no_raw_control(markdown)
    rendered = MarkdownIt("commonmark").enable("table").render(markdown)
    assert_no_raw_control(rendered)
    parsed = _Cells()
    parsed.feed(rendered)
    categories = [row[1] for row in parsed.rows if len(row) > 1 and row[0] == "run"]
    for value in HOSTILE:  # a slice's row names its slice, not only its category
        assert one_line(f"slice={value}::no_docs") in categories, value
    assert "no_docs" in categories  # the report's own row
    assert one_line(HOSTILE[4]) in "".join(parsed.text)  # a first case, whole


def test_the_html_page_shows_controls_as_visible_escapes(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_cli(capsys, "check", "reports", "--html", "gate.html")
    page = Path("gate.html").read_text(encoding="utf-8")
    assert_no_raw_control(page)
    # an entity would still reorder the text: the override is shown as text
    assert not re.search(r"&#(x202e|8238);", page, re.IGNORECASE)
    parsed = _Cells()
    parsed.feed(page)
    text = "".join(parsed.text)
    assert_no_raw_control(text)
    assert text.count("abc\\u202edcba.exe") >= 3  # the id, and the slice's labels
    assert '"abc\\u202edcba.exe"' in text  # the answer and the error, as JSON


def test_github_annotations_show_controls_as_escapes(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(capsys, "check", "reports", "--github")
    assert code == 1
    annotations = [line for line in out.splitlines() if line.startswith("::error")]
    assert len(annotations) == 1
    assert_no_raw_control(annotations[0])
    assert "abc\\u202edcba.exe" in annotations[0]
    assert "title=failgate run%3A%3Ano_docs::" in annotations[0]


@pytest.mark.heavy
def test_a_category_a_report_recorded_is_shown_with_its_controls_escaped(
    tmp_path: Path, pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """An aggregate's recorded category is its author's: the error that refuses an unknown
    one quotes it as data, in the command's summary and in pytest's failing item alike."""
    name = "abc\u202edcba\x1b[2J\n::error::x"
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "run.aggregate.json").write_text(json.dumps(
        {"num_predictions": 10, "failure_category_counts": {"retrieval_miss": 1, name: 1}}),
        encoding="utf-8")
    (tmp_path / "ceilings.yaml").write_text("version: 1\ntaxonomy: rag\nceilings: {total: 5}\n",
                                            encoding="utf-8")
    code, out, err = run_cli(capsys, "check", str(tmp_path / "reports"),
                             "--ceilings", str(tmp_path / "ceilings.yaml"))
    assert code == 2
    assert_no_raw_control(out + err)
    assert "abc\\u202edcba\\x1b[2J\\n::error::x" in out
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest_subprocess(f"--failgate={tmp_path / 'reports'}",
                                           f"--failgate-ceilings={tmp_path / 'ceilings.yaml'}",
                                           "-p", "no:cacheprovider")
    shown = "\n".join(result.outlines + result.errlines)
    assert_no_raw_control(shown)
    assert "abc\\u202edcba\\x1b[2J\\n::error::x" in shown
