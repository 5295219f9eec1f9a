"""The HTML report: one self-contained, deterministic page, every value escaped."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import TYPE_CHECKING

import pytest
from helpers import EXAMPLES

from pytest_failgate.core.base.result import (
    BaselineResult,
    CaseExample,
    GateResult,
    GuardResultModel,
    LoweringResult,
    ReportResult,
    Row,
)
from pytest_failgate.core.gate.runner import GateConfig, run_gate
from pytest_failgate.output.chart import HistoryPoint, render_history_svg
from pytest_failgate.output.html import render_html

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, Literal

    from pytest_failgate.core.base.verdict import RowVerdict

ROOT = EXAMPLES.parent
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}
HOSTILE = "<script>alert(\"x\")</script> & 'q'"
HOSTILE_CASE = '<img src=x onerror="alert(1)">'
HOSTILE_VALUE = "</td></tr></table><script>alert(1)</script>"


# --- a small DOM from the standard library's HTML parser ------------------------------


class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None], parent: Node | None) -> None:
        self.tag = tag
        self.attrs = attrs
        self.parent = parent
        self.children: list[Node | str] = []

    def iter(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.iter()

    def find_all(self, tag: str, cls: str | None = None) -> list[Node]:
        return [n for n in self.iter() if n.tag == tag
                and (cls is None or cls in (n.attrs.get("class") or "").split())]

    def find(self, tag: str, cls: str | None = None) -> Node:
        found = self.find_all(tag, cls)
        assert found, f"no <{tag} class={cls!r}>"
        return found[0]

    def by_id(self, ident: str) -> Node:
        found = [n for n in self.iter() if n.attrs.get("id") == ident]
        assert len(found) == 1, f"{len(found)} elements with id {ident!r}"
        return found[0]

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def classes(self) -> list[str]:
        return (self.attrs.get("class") or "").split()


class TreeBuilder(HTMLParser):
    """Builds a tree and fails on any end tag that does not close the open element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {}, None)
        self.current = self.root
        self.decls: list[str] = []

    def handle_decl(self, decl: str) -> None:
        self.decls.append(decl)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs), self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.current.children.append(Node(tag, dict(attrs), self.current))

    def handle_endtag(self, tag: str) -> None:
        assert tag not in VOID, f"end tag for the void element <{tag}>"
        assert self.current.tag == tag, f"</{tag}> closes <{self.current.tag}>"
        assert self.current.parent is not None
        self.current = self.current.parent

    def handle_data(self, data: str) -> None:
        self.current.children.append(data)


def parse(document: str) -> Node:
    """The document as a tree; asserts it is an HTML5 document with balanced tags."""
    assert document.startswith("<!DOCTYPE html>\n")
    builder = TreeBuilder()
    builder.feed(document)
    builder.close()
    assert builder.current is builder.root, f"<{builder.current.tag}> is never closed"
    assert builder.decls == ["DOCTYPE html"]
    (html,) = [c for c in builder.root.children if isinstance(c, Node)]
    assert html.tag == "html"
    assert [c.tag for c in html.children if isinstance(c, Node)] == ["head", "body"]
    return builder.root


def cells(row: Node) -> list[str]:
    return [" ".join(td.text().split()) for td in row.find_all("td")]


# --- results to render ----------------------------------------------------------------


@pytest.fixture(scope="module")
def regression() -> GateResult:
    config = GateConfig(paths=(EXAMPLES / "regression",), ceilings_path=ROOT / "ceilings.yaml")
    return run_gate(config).result()


@pytest.fixture(scope="module")
def passing() -> GateResult:
    config = GateConfig(paths=(EXAMPLES / "reports",), ceilings_path=ROOT / "ceilings.yaml")
    return run_gate(config).result()


def row(name: str, count: int | None, limit: int | None, verdict: RowVerdict,
        report: str = "eval", **extra: Any) -> Row:
    kind: Literal["category", "total", "consistency"] = (
        "total" if name == "total" else "consistency" if name == "consistency" else "category")
    return Row(report=report, name=name, kind=kind, count=count, limit=limit,
               ceiling="" if limit is None else str(limit), source="ceilings.yaml:7",
               line=7, verdict=verdict, **extra)


def hostile(mode: Literal["gate", "strict", "ratchet", "init"] = "strict") -> GateResult:
    """A run with every feature, and markup in every value that reaches the page."""
    baseline = BaselineResult(base_count=1, new=[HOSTILE_CASE, "new-2"], fixed=["fixed&1"],
                              n_new=60, n_fixed=1, p_value=0.0312, significant=True, band=1,
                              beyond_band=True, verdict="fail", paired=80)
    failing = row(HOSTILE, 5, 1, "fail", report=HOSTILE, rule=f"rule {HOSTILE}",
                  message=f"{HOSTILE}: 5 cases, 4 over\n  cases    {HOSTILE_CASE}",
                  first_cases=[HOSTILE_CASE],
                  examples=[CaseExample(id=HOSTILE_CASE, fields={
                      "answer": HOSTILE_VALUE, "score": 0.25, "tags": ["a<b", "c&d"],
                      "ctrl": "bell\x07nul\x00", "missing": None}),
                      CaseExample(id="plain-case", fields={"score": 1})],
                  baseline=baseline)
    slack = row("retrieval_miss", 2, 4, "fail", report=HOSTILE, slack=True,
                message="retrieval_miss: the ceiling has slack (count 2)",
                baseline=BaselineResult(base_count=2, new=[], fixed=[], n_new=0, n_fixed=0,
                                        p_value=1.0, significant=False, band=1,
                                        beyond_band=False, verdict="pass", paired=80))
    error = row("generator_hallucination", None, None, "error", report=HOSTILE,
                message="generator_hallucination: cannot be checked: field <x> missing")
    passing = row("verifier_false_negative", 3, 3, "pass", report=HOSTILE,
                  examples=[CaseExample(id="vfn-1", fields={"answerable": False})])
    consistency = row("consistency", None, None, "pass", report=HOSTILE)
    total = row("total", 10, 8, "fail", report=HOSTILE, message="total: 10 cases, 2 over")
    sliced = row("retrieval_miss", 1, 2, "pass", report=HOSTILE, slice="query_type=<cmp>")
    return GateResult(
        ceilings_path="ceil<ings>.yaml", ceilings_sha256="0123456789abcdef" * 4,
        taxonomy="rag&<b>", mode=mode,
        reports=[
            ReportResult(name=HOSTILE, path=f"reports/{HOSTILE}.json", kind="cases",
                         n_cases=40, failed=10,
                         rows=[failing, slack, error, passing, consistency, total, sliced],
                         warnings=[f"rule {HOSTILE}: 'x' absent in 3 of 40 cases"]),
            ReportResult(name="broken<1>", path="reports/broken.json", kind=None, n_cases=None,
                         failed=None, error=f"reports/broken.json: not JSON: {HOSTILE}"),
        ],
        skipped=[f"reports/{HOSTILE}.txt (not .json or .jsonl)"],
        guard=GuardResultModel(ref="origin/<main>", passed=False, lines=[
            "guard: 1 of 1 loosened ceilings in ceilings.yaml since origin/<main> have no reason",
            f"  ceilings.{HOSTILE}: 4 -> 9"]),
        warnings=[f"global warning {HOSTILE}", "nul\x00, lone \ud800"],
        lowerings=[LoweringResult(label="ceilings.retrieval_miss", start=10, end=11,
                                  new_text="2", governs=[(HOSTILE, "", "retrieval_miss")],
                                  description=f"ceilings.{HOSTILE} 4 -> 2 (line 7)")],
        ratchet_advice="`failgate ratchet reports`",
    )


def chart() -> str:
    points = [HistoryPoint("run-1", {"retrieval_miss": 1}),
              HistoryPoint("run-2", {"retrieval_miss": 4})]
    return render_history_svg(points, ["retrieval_miss"], {"retrieval_miss": 1})


# --- tests ----------------------------------------------------------------------------


def test_the_failing_example_shows_headline_failing_rows_and_cases(regression: GateResult) -> None:
    page = render_html(regression)
    doc = parse(page)
    h1 = " ".join(doc.find("h1").text().split())
    assert h1.endswith("2 of 24 checks failed")
    assert "is-fail" in doc.find("header").classes()
    facts = {dt.text(): dt.parent.find("dd").text() for dt in doc.find("dl", "facts")
             .find_all("dt") if dt.parent is not None}
    assert facts == {"taxonomy": "rag", "ceilings": "ceilings.yaml", "reports": "3",
                     "cases": "468", "mode": "gate"}

    summary = doc.by_id("summary")
    assert len(summary.find_all("table", "summary")) == 3
    failing_rows = [cells(tr) for tr in summary.find_all("tr", "is-fail")]
    assert [c[:5] for c in failing_rows] == [["retrieval_miss", "4", "1", "-3", "FAIL"],
                                             ["total", "10", "7", "-3", "FAIL"]]
    assert len(summary.find_all("tr")) == 3 * (8 + 1)  # 8 rows and a header per report
    assert "vs baseline" not in summary.text()

    # One section per failing check, linked from the summary, with its cases and fields.
    articles = doc.by_id("failures").find_all("article")
    assert len(articles) == 2
    links = [a.attrs["href"] for a in summary.find_all("a")]
    assert links == [f"#{a.attrs['id']}" for a in articles]
    retrieval = articles[0]
    assert "retrieval_miss: 4 cases, 3 over the ceiling of 1" in retrieval.find("pre").text()
    assert "no expected doc in evidence_doc_ids" in retrieval.find("p", "rule").text()
    table = retrieval.find("table", "cases")
    head = [th.text() for th in table.find_all("th")]
    assert head[0] == "case"
    assert {"answerable", "accuracy", "evidence_doc_ids", "expected_doc_ids"} <= set(head)
    body = [cells(tr) for tr in table.find("tbody").find_all("tr")]
    wanted = next(r for r in regression.rows if r.name == "retrieval_miss")
    assert [b[0] for b in body] == [e.id for e in wanted.examples]
    for example, shown in zip(wanted.examples, body, strict=True):
        for field, value in example.fields.items():
            assert shown[head.index(field)] == json.dumps(value, ensure_ascii=False)
    assert len(articles[1].find("tbody").find_all("tr")) == 10

    # The passing category with cases is folded. Nothing needs a note: the licence file
    # beside the reports is no skipped report, and a failing run offers no ratchet.
    folded = doc.by_id("passing").find_all("details")
    assert ["verifier_false_negative" in d.find("summary").text() for d in folded] == [True]
    assert all("open" not in d.attrs for d in folded)
    assert "LICENSE" not in page
    assert "ratchet would lower" not in page


def test_an_all_passing_run_has_no_failure_sections(passing: GateResult) -> None:
    doc = parse(render_html(passing))
    assert " ".join(doc.find("h1").text().split()).endswith("All 24 checks passed")
    assert "is-pass" in doc.find("header").classes()
    assert doc.find_all("tr", "is-fail") == []
    assert not any(n.attrs.get("id") == "failures" for n in doc.iter())
    assert [b.text() for b in doc.by_id("summary").find_all("span", "badge")] == ["pass"] * 24


def test_hostile_values_are_escaped_and_still_shown() -> None:
    result = hostile()
    page = render_html(result, title=f"title {HOSTILE}")
    doc = parse(page)
    tags = {n.tag for n in doc.iter()}
    assert "script" not in tags
    assert "img" not in tags
    assert "<script" not in page.lower()
    assert "<img" not in page.lower()
    assert not any(name.startswith("on") for n in doc.iter() for name in n.attrs)
    assert "\x00" not in page
    assert "\x07" not in page
    page.encode("utf-8")  # nothing unencodable

    # Escaped is not dropped: every hostile value reads as it was written.
    text = doc.text()
    assert f"title {HOSTILE}" in doc.find("title").text()
    assert f"title {HOSTILE}" in doc.find("p", "eyebrow").text()
    assert doc.find("h3").text() == HOSTILE
    assert HOSTILE_CASE in doc.find("td", "id").text()
    assert json.dumps(HOSTILE_VALUE) in text
    assert '["a<b", "c&d"]' in text
    assert '"bell\\u0007nul\\u0000"' in text  # JSON shows control characters escaped
    # elsewhere a control shows as its escape; what HTML cannot hold at all is replaced
    assert "nul\\x00, lone \ufffd" in text
    assert f"reports/broken.json: not JSON: {HOSTILE}" in text
    assert f"global warning {HOSTILE}" in text
    assert "ceil<ings>.yaml" in doc.find("dl", "facts").text()
    assert "rag&<b>" in doc.find("dl", "facts").text()
    assert "&amp;lt;" not in page  # escaped once, not twice


def test_every_feature_of_a_run_reaches_the_page() -> None:
    doc = parse(render_html(hostile()))
    h1 = " ".join(doc.find("h1").text().split())
    assert h1.endswith("1 report could not be read; 4 of 7 checks failed; "
                       "the ceilings guard against origin/<main> found a loosening "
                       "without a reason")
    assert "broken<1>" in doc.find("ul", "load-errors").text()

    # The baseline column appears, with each row's baseline text.
    table = doc.by_id("summary").find("table", "summary")
    head = [th.text() for th in table.find_all("th")]
    assert "vs baseline" in head
    column = head.index("vs baseline")
    body = [cells(tr) for tr in table.find("tbody").find_all("tr")]
    assert [b[column] for b in body] == ["+60 / -1 FAIL", "+0 / -0", "", "", "", "", ""]
    assert [b[head.index("verdict")] for b in body] == [
        "FAIL", "FAIL · strict", "error", "pass", "pass", "FAIL", "pass"]
    assert [b[head.index("headroom")] for b in body] == ["-4", "+2", "", "0", "", "-2", "+1"]
    assert body[-1][0] == "query_type=<cmp>::retrieval_miss"  # a slice's row names it
    note = doc.by_id("summary").find("p", "note")
    assert "strict mode wants the gain committed: run failgate ratchet reports" in note.text()
    assert note.find("code").text() == "failgate ratchet reports"

    # The failing sections: the error and the strict failure too, baselines listed.
    articles = doc.by_id("failures").find_all("article")
    assert [a.find("span", "title-name").text() for a in articles] == [
        HOSTILE, "retrieval_miss", "generator_hallucination", "total"]
    assert "is-strict" in articles[1].classes()
    assert "No paired case entered or left this category." in articles[1].text()
    assert "is-error" in articles[2].classes()
    first = articles[0]
    ids = [[code.text() for code in ul.find_all("code")] for ul in first.find_all("ul", "ids")]
    assert ids == [[HOSTILE_CASE, "new-2"], ["fixed&1"]]
    headings = [h.text() for h in first.find_all("h4")]
    assert headings == ["first 2 cases", "against the baseline", "new (first 2 of 60)",
                        "fixed (1)"]
    rows = [cells(tr) for tr in first.find("tbody").find_all("tr")]
    assert rows[1][0] == "plain-case"
    assert rows[1][1:] == ["absent", "1", "absent", "absent", "absent"]
    assert rows[0][5] == "null"

    guard = doc.by_id("guard")
    assert "failure" in guard.find("div", "card").classes()
    assert f"ceilings.{HOSTILE}: 4 -> 9" in guard.find("pre").text()
    assert "failed vs origin/<main>" in " ".join(doc.find("dl", "facts").text().split())

    notes = doc.by_id("notes")
    assert [h.text() for h in notes.find_all("h4")] == [
        "3 warnings", "skipped 1 file", "a ratchet would lower 1 ceiling"]
    assert notes.find_all("li")[0].text().startswith(f"{HOSTILE}: rule ")


@pytest.mark.parametrize("mode", ["ratchet", "init"])
def test_lowerings_are_offered_only_when_gating(
        mode: Literal["gate", "strict", "ratchet", "init"]) -> None:
    doc = parse(render_html(hostile(mode)))
    assert "ratchet would lower" not in doc.by_id("notes").text()


def test_the_history_chart_is_inline_between_summary_and_failures(
        regression: GateResult) -> None:
    svg = chart()
    page = render_html(regression, history_svg=svg)
    doc = parse(page)
    assert svg.strip() in page
    history = doc.by_id("history")
    assert [n.tag for n in history.iter()].count("svg") == 1
    order = [n.attrs.get("id") for n in doc.iter() if n.tag in ("section", "header")]
    assert order == ["top", "summary", "history", "failures", "passing"]

    assert "<svg" not in render_html(regression)
    prologue = '<?xml version="1.0" encoding="UTF-8"?>\n' + svg
    assert render_html(regression, history_svg=prologue) == page
    with pytest.raises(ValueError, match="not an SVG document"):
        render_html(regression, history_svg="<p>not a chart</p>")


def test_the_same_result_gives_the_same_bytes(regression: GateResult) -> None:
    first = render_html(regression, chart())
    assert render_html(regression, chart()) == first
    copy = GateResult.model_validate_json(regression.model_dump_json())
    assert render_html(copy, chart()) == first
    assert render_html(hostile()) == render_html(hostile())
    assert not re.search(r"20\d\d-\d\d-\d\d", render_html(regression))  # no date stamp


@pytest.mark.parametrize("which", ["regression", "hostile"])
def test_nothing_is_loaded_from_outside_the_page(regression: GateResult, which: str) -> None:
    page = render_html(regression if which == "regression" else hostile(), chart())
    lowered = page.lower()
    external = r"""(src|href|action|srcset|poster|data)\s*=\s*["']?\s*(https?:|//|ftp:)"""
    assert not re.search(external, lowered)
    assert "<link" not in lowered
    assert "@import" not in lowered
    assert "url(" not in lowered
    assert "<script" not in lowered
    assert "<iframe" not in lowered
    doc = parse(page)
    for node in doc.iter():
        assert "src" not in node.attrs, node.tag
        href = node.attrs.get("href")
        assert href is None or href.startswith("#"), href
    (csp,) = [m.attrs["content"] for m in doc.find_all("meta")
              if m.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert csp is not None
    assert "default-src 'none'" in csp
    assert len(doc.find_all("style")) == 1


def test_a_run_with_no_reports_still_renders() -> None:
    empty = GateResult(ceilings_path="ceilings.yaml", ceilings_sha256=None, taxonomy="rag",
                       mode="gate", reports=[], skipped=[], warnings=[], lowerings=[])
    doc = parse(render_html(empty))
    assert " ".join(doc.find("h1").text().split()).endswith("No checks to run")
    assert "No reports were found." in doc.by_id("summary").text()


def test_every_link_has_one_target_even_for_repeated_rows(regression: GateResult) -> None:
    shared = row("retrieval_miss", 3, 1, "fail", message="retrieval_miss: 3 cases")
    reports = [ReportResult(name=name, path=f"{name}.json", kind="cases", n_cases=5, failed=3,
                            rows=[shared]) for name in ("a", "b")]
    twice = regression.model_copy(update={"reports": reports})
    for result in (regression, hostile(), twice):
        doc = parse(render_html(result))
        ids = [n.attrs["id"] for n in doc.iter() if "id" in n.attrs]
        assert len(ids) == len(set(ids)), ids
        links = [n.attrs["href"] for n in doc.iter() if n.tag == "a"]
        assert links
        assert {str(link)[1:] for link in links} <= set(ids)
    assert len(parse(render_html(twice)).by_id("failures").find_all("article")) == 2
