"""What a report's author writes (case ids, report names, the errors a report causes) is
data in every output: never a GitHub workflow command in a log, never Markdown markup, a
link, an image, HTML or a mention in the job summary or the pull-request comment, never
markup in the HTML report.

The reports hold case ids and a file name made to attack each output; the Markdown is
rendered with a CommonMark renderer (tables on, as GitHub's), and the logs are split into
lines as the Actions runner splits them (any line break, leading whitespace trimmed).
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from helpers import (
    case,
    category_case,
    gate_in_pytest,
    run_cli,
    write_ceilings,
    write_summary,
)
from markdown_it import MarkdownIt

from pytest_failgate.ci.__main__ import main as ci_main
from pytest_failgate.core.base.formatting import one_line
from pytest_failgate.output.markdown import code_span

HOSTILE_IDS = [
    "q1\n::stop-commands::pwned",
    "q2\r\n  ::add-mask::ghs_secret",
    "q3\r::error file=ceilings.yaml,line=1::forged",
    "q4`<img src=x onerror=alert(1)>` @octocat [click](https://evil.example)",
    "q5``` <script>alert(1)</script> @octo-org/team ![i](https://evil.example/i.png)",
    "q6\n\n<details open><summary>@octocat</summary>",
    "`q7`",
]
# A report whose file name is a command, and that is not JSON (its error names it).
HOSTILE_FILE = "::warning::evil\n::add-mask::x.json"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cases = [category_case("retrieval_miss", i) for i in HOSTILE_IDS]
    cases += [case(f"ok-{n}") for n in range(5)]
    write_summary(tmp_path / "reports" / "eval_summary.json", cases)
    (tmp_path / "reports" / HOSTILE_FILE).write_text("{not json", encoding="utf-8")
    write_ceilings(tmp_path / "ceilings.yaml", {"retrieval_miss": 0, "total": 0})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    return tmp_path


def runner_lines(text: str) -> list[str]:
    """A log as the Actions runner reads it: lines at any break, leading space trimmed."""
    return [line.lstrip() for line in re.split(r"\r\n|\r|\n", text)]


def forged_commands(text: str) -> list[str]:
    """Workflow commands in a log other than failgate's own annotations."""
    return [line for line in runner_lines(text) if line.startswith(("::", "##["))
            and not line.startswith(("::error file=ceilings.yaml,line=", "::error title="))]


def test_the_command_line_prints_no_workflow_command_from_report_content(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "check", "reports", "--github", "--md", "gate.md")
    assert code == 2  # a report that could not be read
    assert forged_commands(out + err) == []
    # failgate's own annotations are one line each, their content escaped
    own = [line for line in runner_lines(out) if line.startswith("::error")]
    assert own
    assert all("::stop-commands::" not in line.split("::", 2)[1] for line in own)
    shown = out + err
    assert one_line(HOSTILE_IDS[0]) in shown  # the data is there, as one line


def test_the_ci_step_prints_no_workflow_command_from_report_content(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = ci_main(["reports", "--out-dir", "out"], env={})
    out, err = capsys.readouterr()
    assert code == 2
    assert forged_commands(out + err) == []
    assert "  failed: ceilings.yaml::eval_summary::retrieval_miss" in out


@pytest.mark.heavy
def test_the_pytest_summary_prints_no_workflow_command_from_report_content(
    pytester: pytest.Pytester, project: Path
) -> None:
    result = gate_in_pytest(pytester, project)
    shown = "\n".join(result.outlines + result.errlines)
    assert forged_commands(shown) == []
    assert "::warning::evil\\n::add-mask::x" in shown  # the report that did not load
    result.stdout.fnmatch_lines(["FAILED *ceilings.yaml::eval_summary::retrieval_miss*"])


class _Tags(HTMLParser):
    """The elements of an HTML document, and the text inside ``<code>`` and outside it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[str] = []
        self.code: list[str] = []
        self.text: list[str] = []
        self._in_code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [value or "" for _, value in attrs]
        self._in_code += tag == "code"
        if self._in_code and tag == "code":
            self.code.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in_code -= tag == "code" and self._in_code > 0

    def handle_data(self, data: str) -> None:
        if self._in_code:
            self.code[-1] += data
        else:
            self.text.append(data)


def _rendered(markdown: str) -> _Tags:
    parsed = _Tags()
    parsed.feed(MarkdownIt("commonmark").enable("table").render(markdown))
    return parsed


def _assert_inert_markdown(markdown: str) -> None:
    parsed = _rendered(markdown)
    assert not {"img", "script", "a"} & set(parsed.tags), parsed.tags
    assert parsed.tags.count("details") == markdown.count("<details>")  # only failgate's own
    outside = "".join(parsed.text)
    assert not re.search(r"@[\w-]", outside), outside  # no mention outside code
    for case_id in HOSTILE_IDS:  # each id whole in one code span
        assert one_line(case_id) in parsed.code, case_id


def test_the_markdown_report_shows_every_id_in_a_code_span_it_cannot_leave(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_cli(capsys, "check", "reports", "--md", "gate.md", "--github")
    _assert_inert_markdown(Path("gate.md").read_text(encoding="utf-8"))
    _assert_inert_markdown((project / "summary.md").read_text(encoding="utf-8"))


def test_the_ci_steps_markdown_and_comment_are_inert(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ci_main(["reports", "--out-dir", "out"], env={})
    markdown = Path("out/failgate.md").read_text(encoding="utf-8")
    parsed = _rendered(markdown)
    assert not {"img", "script", "a"} & set(parsed.tags)
    assert not re.search(r"@[\w-]", "".join(parsed.text))


def test_the_html_report_escapes_every_id(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_cli(capsys, "check", "reports", "--html", "gate.html")
    page = Path("gate.html").read_text(encoding="utf-8")
    parsed = _Tags()
    parsed.feed(page)
    assert not {"img", "script"} & set(parsed.tags)
    assert not [value for value in parsed.attributes if "evil" in value or "alert" in value]
    assert parsed.tags.count("details") == page.count("<details")
    shown = "".join(parsed.code) + "".join(parsed.text)
    for case_id in HOSTILE_IDS:  # each id whole, as text on one line, as every output shows it
        assert one_line(case_id) in shown, case_id


@pytest.mark.parametrize("text", ["plain", "a`b", "``", "`lead", "trail`", "a ``` b", "x|y",
                                  "line\nbreak", "  spaced  "])
def test_a_code_span_holds_its_text_whatever_it_contains(text: str) -> None:
    parsed = _rendered(f"before {code_span(text)} after")
    assert parsed.code == [one_line(text)]
    assert "".join(parsed.text).strip() == "before  after"


def test_each_cases_reason_from_the_report_is_a_code_span_it_cannot_leave(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taxonomy.yaml").write_text(
        'name: graded\nfailed: verdict == "fail"\ntypes:\n  reason: string | null\n'
        "categories:\n  - name: other\n", encoding="utf-8")
    rows = [{"id": f"c{n}", "verdict": "fail", "reason": reason}
            for n, reason in enumerate(HOSTILE_IDS)]
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "run.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    (tmp_path / "ceilings.yaml").write_text(
        "version: 1\ntaxonomy: taxonomy.yaml\nceilings:\n  other: 0\n", encoding="utf-8")
    assert run_cli(capsys, "check", "reports", "--md", "gate.md")[0] == 1
    markdown = Path("gate.md").read_text(encoding="utf-8")
    parsed = _rendered(markdown)
    assert not {"img", "script", "a"} & set(parsed.tags), parsed.tags
    assert parsed.tags.count("details") == markdown.count("<details>")
    assert not re.search(r"@[\w-]", "".join(parsed.text))
    for reason in HOSTILE_IDS:  # each reason shown, whole, in one code span
        assert one_line(reason) in parsed.code, reason
