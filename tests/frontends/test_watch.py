"""``failgate plan`` and ``failgate watch``: a run gated as it is written, stopped once settled."""

from __future__ import annotations

import json
import random
import re
import sys
import time
from typing import TYPE_CHECKING, Any

import pytest
from helpers import CATEGORY_CASES, CONFIDENCE, case, cases_for, write_ceilings, write_jsonl
from helpers import run_cli as run

from pytest_failgate.cli import main

if TYPE_CHECKING:
    from pathlib import Path

CATEGORIES = ("retrieval_miss", "verifier_false_negative", "generator_hallucination")

WRITER = """\
import json, sys, time
cases = json.load(open(sys.argv[1]))
with open(sys.argv[2], "w") as out:
    for case in cases:
        out.write(json.dumps(case) + "\\n")
        out.flush()
        time.sleep(0.05)
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_ceilings(tmp_path / "ceilings.yaml", {"retrieval_miss": 4,
                                                "verifier_false_negative": 3,
                                                "generator_hallucination": 2})
    return tmp_path


def _last_line(out: str) -> str:
    return out.rstrip("\n").splitlines()[-1]


SETTLED = re.compile(r"verdict (pass|fail|inconclusive): .*settled after (\d+) of (\d+) planned "
                     r"cases \(\d+ started and paid for\): the verdict is the full run's"
                     rf"( with probability at least {re.escape(CONFIDENCE)})?")


def _settled(out: str) -> tuple[str, int, int, bool]:
    """The last line's verdict, n, N and whether it claims 95% (not exactness)."""
    found = SETTLED.fullmatch(_last_line(out))
    assert found is not None, _last_line(out)
    return found.group(1), int(found.group(2)), int(found.group(3)), bool(found.group(4))


@pytest.mark.slow
def test_replay_agrees_with_check_on_random_orders_of_hard_populations(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Populations at their ceilings or one over, in random orders: a replay settles on
    check's verdict (exactly, when it reads every case; but with probability delta, when
    earlier)."""
    rng = random.Random(28)
    ceilings = {"retrieval_miss": 4, "verifier_false_negative": 3, "generator_hallucination": 2}
    runs, disagreements, early = 12, 0, 0
    for index in range(runs):
        counts = {name: k + rng.choice([0, 0, 1]) for name, k in ceilings.items()}
        report = write_jsonl(project / f"run{index}.jsonl",
                             cases_for(counts, passed=60, seed=index))
        checked = run(capsys, "check", str(report))[0]
        code, out, _ = run(capsys, "watch", str(report), "--replay")
        assert checked in (0, 1)
        _, n, planned, claimed = _settled(out)
        assert planned == 60 + sum(counts.values())
        assert claimed == (n < planned)
        if n == planned:
            assert code == checked, out
        else:
            early += 1
            disagreements += code != checked
    assert disagreements <= 1
    assert early  # some replays settled before their last case


def test_watch_stops_a_broken_harness_before_half_its_cases(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    planned = 200
    cases = cases_for({"retrieval_miss": 60}, passed=planned - 60, seed=3)
    (project / "cases.json").write_text(json.dumps(cases))
    (project / "writer.py").write_text(WRITER)
    started = time.monotonic()
    code, out, _ = run(capsys, "watch", "results.jsonl", "--planned", str(planned), "--",
                       sys.executable, "writer.py", "cases.json", "results.jsonl")
    assert code == 1
    verdict, n, of, claimed = _settled(out)
    assert (verdict, of, claimed) == ("fail", planned, True)
    assert n < planned // 2
    assert "retrieval_miss: " in out
    written = (project / "results.jsonl").read_text().count("\n")
    time.sleep(0.5)  # the harness was stopped: the report no longer grows
    assert (project / "results.jsonl").read_text().count("\n") == written < planned
    assert time.monotonic() - started < planned * 0.05


def test_a_plan_orders_each_case_once_from_its_seed(project: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    report = write_jsonl(project / "data.jsonl", cases_for({"retrieval_miss": 2}, passed=30))
    ids = [json.loads(line)["id"] for line in report.read_text().splitlines()]
    code, out, _ = run(capsys, "plan", str(report), "--seed", "7", "--out", "a.json")
    assert (code, out) == (0, f"plan: 32 cases of {report} in a random order (seed 7) -> "
                              "a.json\ncase ids: the field id\n")
    run(capsys, "plan", str(report), "--seed", "7", "--out", "b.json")
    run(capsys, "plan", str(report), "--seed", "8", "--out", "c.json")
    first, again, other = (json.loads((project / f"{n}.json").read_text())["cases"]
                           for n in "abc")
    assert first == again != other
    assert sorted(first) == sorted(ids)
    assert first != ids


def test_watch_judges_the_plans_order_whatever_order_cases_finish_in(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Cases finished out of plan order wait for the cases planned before them."""
    cases = cases_for({"retrieval_miss": 2}, passed=8, seed=1)
    write_jsonl(project / "data.jsonl", cases)
    run(capsys, "plan", "data.jsonl", "--seed", "1", "--out", "plan.json")
    order = json.loads((project / "plan.json").read_text())["cases"]
    finished = [next(c for c in cases if c["id"] == i) for i in reversed(order)]
    write_jsonl(project / "results.jsonl", finished)
    code, out, _ = run(capsys, "watch", "results.jsonl", "--plan", "plan.json", "--replay")
    lines = out.splitlines()
    assert code == 0
    assert lines[0].startswith(f'finished "{order[-1]}"')
    assert "waiting for the cases planned before it" in lines[0]
    judged = [line.split('"')[1] for line in lines if line.startswith("case ")]
    assert judged == order
    assert _last_line(out) == ("verdict pass: all 7 checks passed; settled after 10 of 10 "
                               "planned cases (10 started and paid for): the verdict is the "
                               "full run's")


@pytest.mark.parametrize(("args", "lines", "message"), [
    (["--replay", "--planned", "3"], ["a", '{"id": "b", '], "results.jsonl:2:"),
    ([], ["a"], "watch needs the planned number of cases"),
    (["--replay", "--planned", "2"], ["a", "[1]"],
     "results.jsonl:2: case #2: is array, not an object"),
    (["--replay", "--delta", "1.5"], ["a"], "delta must lie strictly between 0 and 1"),
    (["--replay", "--planned", "0"], ["a"], "--planned must be at least 1"),
])
def test_bad_input_to_watch_is_one_error_and_exit_2(
        project: Path, capsys: pytest.CaptureFixture[str], args: list[str], lines: list[str],
        message: str) -> None:
    """Each line is a passing case with that id, or the text as written."""
    text = [json.dumps(case(line)) if line.isalpha() else line for line in lines]
    (project / "results.jsonl").write_text("\n".join(text) + "\n")
    code, _, err = run(capsys, "watch", "results.jsonl", *args)
    assert code == 2
    assert err.startswith("failgate: error: ")
    assert message in err
    assert err.count("\n") == 1


def test_watch_refuses_a_ceilings_file_it_cannot_mirror(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_ceilings(project / "ceilings.yaml", {"retrieval_miss": 4}, header="significance: 0.05")
    write_jsonl(project / "results.jsonl", cases_for({}, passed=3))
    code, _, err = run(capsys, "watch", "results.jsonl", "--replay")
    assert code == 2
    assert "sequential gating mirrors count and rate ceilings only" in err
    assert "significance:" in err


def test_plan_and_watch_have_help_with_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("plan", "watch"):
        with pytest.raises(SystemExit) as info:
            main([command, "--help"])
        assert info.value.code == 0
        assert f"example:\n  failgate {command}" in capsys.readouterr().out


def test_watch_with_futility_passes_a_clean_run_sooner_and_says_so(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_ceilings(project / "ceilings.yaml", dict.fromkeys(
        ("verifier_false_negative", "verifier_false_positive", "retrieval_miss",
         "planner_under_decomposition", "generator_hallucination", "context_dilution",
         "unknown"), 12))
    report = write_jsonl(project / "run.jsonl", cases_for({"retrieval_miss": 3}, passed=297,
                                                          seed=4))
    code, out, _ = run(capsys, "watch", str(report), "--replay", "--json", "plain.json")
    assert code == 0
    plain = json.loads((project / "plain.json").read_text())["sequential"]
    code, out, _ = run(capsys, "watch", str(report), "--replay", "--futility", "0.05",
                       "--margin", "10", "--json", "futile.json")
    assert code == 0
    futile = json.loads((project / "futile.json").read_text())["sequential"]
    assert futile["n"] < plain["n"]
    assert (plain["beta"], futile["beta"], futile["margin"]) == (None, 0.05, 10)
    assert _last_line(out) == (
        f"verdict pass: all 7 checks passed; settled after {futile['n']} of 300 planned "
        f"cases ({futile['n']} started and paid for): a pass by futility: a regression of 10 "
        "cases past a ceiling would pass this early with probability at most 5%, a smaller "
        "one might")


def test_a_plan_within_strata_permutes_each_stratum_and_watch_gates_it(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = cases_for({"retrieval_miss": 4}, passed=36, seed=5)
    for index, one in enumerate(cases):
        one["domain"] = "legal" if index % 4 == 0 else "medical"
    write_jsonl(project / "data.jsonl", cases)
    code, out, _ = run(capsys, "plan", "data.jsonl", "--seed", "3", "--strata", "domain",
                       "--out", "plan.json")
    assert (code, out) == (0, "plan: 40 cases of data.jsonl in a random order within each of "
                              "2 strata of domain (seed 3) -> plan.json\n"
                              "case ids: the field id\n")
    plan = json.loads((project / "plan.json").read_text())
    stratum = {c["id"]: c["domain"] for c in cases}
    assert plan["strata"] == {"field": "domain",
                              "of": [stratum[i] for i in plan["cases"]]}
    assert sorted(plan["cases"]) == sorted(stratum)
    # interleaved in proportion: a legal case (a quarter of them) every fourth place
    assert [i for i, s in enumerate(plan["strata"]["of"]) if s == "legal"] == list(
        range(1, 40, 4))
    code, out, _ = run(capsys, "watch", "data.jsonl", "--plan", "plan.json", "--replay")
    checked = run(capsys, "check", "data.jsonl")[0]
    # retrieval_miss at its ceiling of 4, categories without an entry at theirs (0): a pass
    # settled only at the last case, where the verdict is check's exactly
    assert code == checked == 0
    assert _settled(out) == ("pass", 40, 40, False)


def test_a_case_without_the_stratum_field_is_one_error_naming_it(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_jsonl(project / "data.jsonl", [case("a", domain="x"), case("b")])
    code, _, err = run(capsys, "plan", "data.jsonl", "--strata", "domain")
    assert code == 2
    assert err == ("failgate: error: data.jsonl:2: case \"b\": the stratum field 'domain' "
                   "must be a string, an integer or a boolean\n")


def test_watch_against_a_baseline_fails_a_run_whose_new_failures_outnumber_its_fixed(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Paired mode: the ceilings allow 60 retrieval misses, the baseline had 5; a run with
    45 of them fails on the comparison, early, where the ceilings alone would pass it."""
    write_ceilings(project / "ceilings.yaml", {"retrieval_miss": 60})
    before = cases_for({"retrieval_miss": 5}, passed=295, seed=6)
    ids = [one["id"] for one in before]
    after = [dict(one, **CATEGORY_CASES["retrieval_miss"]) if index % 7 == 0 else one
             for index, one in enumerate(before)]
    write_jsonl(project / "baseline.jsonl", before)
    write_jsonl(project / "run.jsonl", after)
    assert [one["id"] for one in after] == ids
    assert run(capsys, "check", "run.jsonl")[0] == 0  # its ceilings alone: a pass
    code, out, _ = run(capsys, "watch", "run.jsonl", "--replay", "--baseline", "baseline.jsonl",
                       "--json", "gate.json")
    verdict, n, planned, claimed = _settled(out)
    assert (code, verdict, planned, claimed) == (1, "fail", 300, True)
    assert n < 200
    rows = {row["name"]: row for row in
            json.loads((project / "gate.json").read_text())["reports"][0]["rows"]}
    assert rows["retrieval_miss vs baseline"]["verdict"] == "fail"
    assert rows["retrieval_miss vs baseline"]["ceiling"] == "a rise of 0"


def test_watch_against_an_identical_baseline_passes_at_the_last_case(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_ceilings(project / "ceilings.yaml", {"retrieval_miss": 60})
    cases = cases_for({"retrieval_miss": 5}, passed=95, seed=6)
    write_jsonl(project / "baseline.jsonl", cases)
    write_jsonl(project / "run.jsonl", cases)
    code, out, _ = run(capsys, "watch", "run.jsonl", "--replay", "--baseline", "baseline.jsonl")
    assert code == 0
    assert _settled(out) == ("pass", 100, 100, False)


def test_watch_against_a_baseline_of_other_cases_is_one_error_not_a_comparison_of_none(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A baseline whose ids are not the run's compares no case: an error, as check's, once
    more than half the planned cases have no counterpart (and before any case, with a plan)."""
    write_ceilings(project / "ceilings.yaml", {"retrieval_miss": 60})
    cases = cases_for({"retrieval_miss": 5}, passed=95, seed=6)
    write_jsonl(project / "baseline.jsonl", [dict(one, id=f"other-{one['id']}") for one in cases])
    write_jsonl(project / "run.jsonl", cases)
    message = ("failgate: error: baseline.jsonl: 51 of the 100 planned cases are not in the "
               "baseline; a comparison needs the same cases (pairs are matched by id)\n")
    code, out, err = run(capsys, "watch", "run.jsonl", "--replay", "--baseline", "baseline.jsonl")
    assert (code, err) == (2, message)
    assert "case 50 of 100" in out
    assert "case 51 of 100" not in out
    assert run(capsys, "plan", "run.jsonl", "--seed", "1", "--out", "plan.json")[0] == 0
    code, out, err = run(capsys, "watch", "run.jsonl", "--replay", "--plan", "plan.json",
                         "--baseline", "baseline.jsonl")
    assert (code, out) == (2, "")
    assert err == message.replace("51 of", "100 of")


def test_watch_against_a_baseline_holding_half_the_cases_compares_them(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_ceilings(project / "ceilings.yaml", {"retrieval_miss": 60})
    cases = cases_for({"retrieval_miss": 5}, passed=95, seed=6)
    write_jsonl(project / "baseline.jsonl", cases[:50])
    write_jsonl(project / "run.jsonl", cases)
    code, out, _ = run(capsys, "watch", "run.jsonl", "--replay", "--baseline", "baseline.jsonl")
    assert code == 0
    assert _settled(out) == ("pass", 100, 100, False)


def test_lines_read_in_bulk_settle_and_fail_where_line_by_line_does(project: Path) -> None:
    """``add_lines`` (a replay's lines classified and gated in bulk) against ``add_raw``
    (one line at a time): the same lines printed (progress aside: past the first 100
    cases it is at a rate), the same settled case, the same error at the same line, a bad
    line before the verdict settles or after it; with a plan too, cases out of its order
    among them (each then released as ``PlannedOrder`` releases it)."""
    from functools import partial

    from pytest_failgate import api
    from pytest_failgate.commands.watching import replayed_line
    from pytest_failgate.core.base.errors import FailgateError

    cases = cases_for({"retrieval_miss": 3, "generator_hallucination": 1}, 296, seed=3)
    good = [json.dumps(one).encode() for one in cases]
    bad_kind = json.dumps(case("odd", answerable="yes")).encode()
    swapped = [*good[:150], good[152], good[150], good[151], *good[153:]]
    write_jsonl(project / "cases.jsonl", cases)
    assert main(["plan", str(project / "cases.jsonl"), "--seed", "1", "--out",
                 str(project / "plan.json")]) == 0
    plan = json.loads((project / "plan.json").read_text())["cases"]
    by_id = {one["id"]: line for one, line in zip(cases, good, strict=True)}
    planned = [by_id[case_id] for case_id in plan]
    variants = [(good, None), ([*good[:130], b"", b" \r", b"{not json", *good[130:]], None),
                ([*good[:140], bad_kind, *good[140:]], None),
                ([*good[:160], good[0], *good[160:]], None),
                ([b"\xef\xbb\xbf" + good[0], *good[1:]], None), ([*good, bad_kind], None),
                (planned, project / "plan.json"),
                ([*planned[:120], planned[125], *planned[120:125], *planned[126:]],
                 project / "plan.json"), (swapped, None),
                ([*(json.dumps(one).encode() for one in cases_for({"retrieval_miss": 9}, 291)),
                  bad_kind], None)]  # fails at its fifth miss: the bad line is not reached
    outcomes: list[tuple[list[str], str | None, int, int, Any]] = []
    for lines, plan_file in variants:
        outcomes = []
        for bulk in (False, True):
            gate = api.sequential_gate(len(lines), ceilings=project / "ceilings.yaml",
                                       plan=plan_file)
            shown: list[str] = []
            error = None
            try:
                if bulk:
                    for at in range(0, len(lines), 37):
                        shown += gate.add_lines(lines[at:at + 37], replayed_line)
                        if gate.settled is not None:
                            break
                else:
                    for raw in lines:
                        shown += gate.add_raw(raw, partial(replayed_line, line=gate.line))
                        if gate.settled is not None:
                            break
            except FailgateError as exc:
                error = str(exc)
            outcomes.append((shown, error, gate.line, gate.cases_read, gate.settled))
        assert outcomes[0][1:] == outcomes[1][1:]
        changed = [[line for i, line in enumerate(got[0]) if line.startswith("  ") or
                    (i + 1 < len(got[0]) and got[0][i + 1].startswith("  "))]
                   for got in outcomes]
        assert changed[0] == changed[1]
        assert outcomes[0][0][:100] == outcomes[1][0][:100]
    assert outcomes[0][1] is None  # the last variant's bad line: after the settled case
    assert outcomes[0][4] is not None
    assert outcomes[0][4].verdict == "fail"
    assert 100 < outcomes[0][4].n < 291
