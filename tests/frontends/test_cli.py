"""The `failgate` console script, and its agreement with the pytest plugin."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from helpers import EXAMPLES, cases_for, write_ceilings, write_summary
from helpers import run_cli as run

from pytest_failgate.cli import SCHEMA, main
from pytest_failgate.core.base.result import GateResult

ROOT = EXAMPLES.parent


def test_check_exit_codes_pass_fail_and_input_error(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "check", "examples/reports")[0] == 0
    code, out, _ = run(capsys, "check", "examples/regression")
    assert code == 1
    assert "FAILED ceilings.yaml::eval_summary::retrieval_miss" in out
    assert "retrieval_miss: 4 cases, 3 over the ceiling of 1" in out
    code, _, err = run(capsys, "check", "nowhere")
    assert code == 2
    assert err.startswith("failgate: error: nowhere: no such file or directory (a report path ")


def test_every_command_has_help_with_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("check", "init", "ratchet", "show", "diff", "schema"):
        with pytest.raises(SystemExit) as info:
            main([command, "--help"])
        assert info.value.code == 0
        assert f"example:\n  failgate {command}" in capsys.readouterr().out


def _plugin_result(pytester: pytest.Pytester, reports: Path, ceilings: Path) -> GateResult:
    pytester.makeini("[pytest]\n")
    out = pytester.path / "plugin.json"
    pytester.runpytest(f"--failgate={reports}", f"--failgate-ceilings={ceilings}",
                       f"--failgate-json={out}", "-p", "no:cacheprovider")
    return GateResult.model_validate_json(out.read_text())


def _numbers(result: GateResult) -> list[tuple[object, ...]]:
    return [(r.report, r.name, r.count, r.limit, r.verdict, r.line) for r in result.rows]


@pytest.mark.parametrize("run_name", ["reports", "regression", "generated"])
def test_cli_and_plugin_give_the_same_counts_and_verdicts(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], run_name: str
) -> None:
    ceilings = ROOT / "ceilings.yaml"
    reports = EXAMPLES / run_name
    if run_name == "generated":
        reports = pytester.path / "generated"
        counts = {"verifier_false_negative": 40, "retrieval_miss": 25, "unknown": 9}
        write_summary(reports / "run.json", cases_for(counts, passed=300))
        ceilings = write_ceilings(pytester.path / "gen.yaml",
                                  {"verifier_false_negative": 40, "retrieval_miss": 20,
                                   "unknown": 10, "total": 80})
    plugin = _plugin_result(pytester, reports, ceilings)
    cli_json = pytester.path / "cli.json"
    main(["check", str(reports), "--ceilings", str(ceilings), "--json", str(cli_json)])
    capsys.readouterr()
    cli = GateResult.model_validate_json(cli_json.read_text())
    assert _numbers(cli) == _numbers(plugin)
    assert [r.message for r in cli.rows] == [r.message for r in plugin.rows]
    assert any(r.verdict == "fail" for r in cli.rows) == (run_name != "reports")


def test_markdown_and_json_are_byte_identical_across_runs(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("a", "b"):
        run(capsys, "check", "examples/regression", "--md", f"{name}.md", "--json", f"{name}.json")
    assert Path("a.md").read_bytes() == Path("b.md").read_bytes()
    assert Path("a.json").read_bytes() == Path("b.json").read_bytes()


def test_markdown_puts_failures_first_and_folds_the_rest(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "check", "examples/regression", "--md", "gate.md")
    text = Path("gate.md").read_text()
    assert text.startswith("### failgate: ❌ 2 of 24 checks failed\n")
    table = text.split("<details>")[0]
    assert "| `eval_summary` | `retrieval_miss` | 4 | 1 | -3 | ❌ FAIL |" in table
    assert "| `eval_summary` | `total` | 10 | 7 | -3 | ❌ FAIL |" in table
    assert "`verifier_false_negative`" not in table
    assert "<details><summary>22 passing checks</summary>" in text
    assert ("`single_doc_chatbot_latency`, `multi_doc_security_controls`, "
            "`follow_up_c_response_target`, `follow_up_state_a_security`") in text


def test_markdown_gives_the_ratchet_command_when_ceilings_can_fall(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ceilings = Path("ceilings.yaml")
    ceilings.write_text(ceilings.read_text().replace("  unknown: 35", "  unknown: 40"))
    run(capsys, "check", "examples/reports", "--md", "gate.md")
    text = Path("gate.md").read_text()
    assert text.startswith("### failgate: ✅ all 24 checks passed\n")
    assert ("1 ceiling can be lowered: `failgate ratchet examples/reports`"
            ", then commit `ceilings.yaml`.") in text


def test_json_output_validates_against_the_shipped_schema(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "check", "examples/regression", "--json", "gate.json")
    schema = json.loads(SCHEMA.read_text())
    jsonschema.validate(json.loads(Path("gate.json").read_text()), schema)
    assert json.loads(Path("gate.json").read_text())["schema_version"] == 1


def test_shipped_schema_is_generated_from_the_models(capsys: pytest.CaptureFixture[str]) -> None:
    generated = json.dumps(GateResult.model_json_schema(mode="serialization"), indent=2,
                           sort_keys=True) + "\n"
    assert SCHEMA.read_text() == generated, "regenerate: failgate schema is stale"
    assert run(capsys, "schema")[1] == generated


def test_github_annotations_point_at_each_failing_ceilings_line(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = workdir / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    _, out, _ = run(capsys, "check", "examples/regression", "--github")
    errors = [line for line in out.splitlines() if line.startswith("::error ")]
    lines = Path("ceilings.yaml").read_text().splitlines()
    assert [e.split("::")[1] for e in errors] == [
        "error file=ceilings.yaml,line=21,title=failgate eval_summary%3A%3Aretrieval_miss",
        "error file=ceilings.yaml,line=25,title=failgate eval_summary%3A%3Atotal",
    ]
    assert lines[20].strip() == "retrieval_miss: 1"
    assert lines[24].strip() == "total: 7"
    assert "%0A  ceiling  max 1 at ceilings.yaml:21" in errors[0]
    assert summary.read_text().startswith("earlier step\n### failgate: ❌ 2 of 24")


def test_init_then_ratchet_through_the_cli(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("ceilings.yaml").unlink()
    code, out, _ = run(capsys, "init", "examples/reports")
    assert code == 0
    assert "init: wrote ceilings.yaml from the current counts of 3 reports" in out
    assert run(capsys, "check", "examples/reports", "--strict")[0] == 0
    assert run(capsys, "init", "examples/reports")[0] == 2  # refuses to overwrite
    text = Path("ceilings.yaml").read_text()
    Path("ceilings.yaml").write_text(text.replace("  unknown: 35", "  unknown: 50"))
    assert run(capsys, "check", "examples/reports", "--strict")[0] == 1
    code, out, _ = run(capsys, "ratchet", "examples/reports")
    assert code == 0
    line = text.splitlines().index("  unknown: 35") + 1  # below init's instrument: block
    assert f"  ceilings.unknown 50 -> 35 (line {line})" in out
    assert Path("ceilings.yaml").read_text() == text


def test_show_draws_the_distribution_with_ceilings_and_cases(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "show", "examples/reports/eval_summary.json", "--top", "2")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "eval_summary  26 cases, 7 failed"
    vfn = next(line for line in lines if "verifier_false_negative" in line)
    assert "█" * 30 in vfn
    assert vfn.endswith("ceiling 6        headroom 0  abstention_missing_blockchain, "
                        "abstention_missing_drone …")
    miss = next(line for line in lines if "retrieval_miss" in line)
    assert "█████" in miss
    assert miss.endswith("follow_up_state_a_security")


def test_diff_lists_new_and_fixed_cases_per_category(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "diff", "examples/reports", "examples/regression")
    assert code == 0
    assert out.splitlines()[:3] == [
        "eval_summary  (26 paired cases)",
        "  retrieval_miss: 1 -> 4  +3 new, -0 fixed",
        "    new: single_doc_chatbot_latency, multi_doc_security_controls, "
        "follow_up_c_response_target",
    ]
    code, out, _ = run(capsys, "diff", "examples/regression", "examples/reports")
    assert "  retrieval_miss: 4 -> 1  +0 new, -3 fixed" in out


def _history(folder: Path) -> Path:
    folder.mkdir()
    real100 = EXAMPLES / "reports" / "real100"
    shutil.copy(real100 / "baseline.aggregate.json", folder / "01-a.aggregate.json")
    shutil.copy(real100 / "failure_distribution.aggregate.json", folder / "02-b.aggregate.json")
    (folder / "03-smoke").mkdir()
    shutil.copy(EXAMPLES / "reports" / "eval_summary.json", folder / "03-smoke")
    return folder


def test_history_prints_a_table_and_writes_a_chart(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _history(workdir / "history")
    code, out, _ = run(capsys, "history", "history", "--svg", "h.svg")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["run", "total", "verifier_false_negative",
                                "verifier_false_positive", "retrieval_miss",
                                "planner_under_decomposition", "generator_hallucination",
                                "unknown"]
    assert lines[1].split() == ["01-a", "180", "76", "3", "64", "1", "1", "35"]
    assert lines[3].split() == ["03-smoke", "7", "6", "0", "1", "0", "0", "0"]
    assert lines[4].split()[0] == "ceiling"
    svg = Path("h.svg").read_text()
    assert svg.startswith("<svg")
    assert "verifier_false_negative" in svg


def test_check_embeds_the_history_in_markdown_and_html(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _history(workdir / "history")
    code, _, _ = run(capsys, "check", "examples/reports", "--history", "history",
                     "--md", "gate.md", "--html", "gate.html")
    assert code == 0
    markdown = Path("gate.md").read_text()
    assert "| 02-b | 164 | 49 | 1 | 83 | 0 | 0 | 31 |" in markdown
    assert "![failure categories over time](gate.history.svg)" in markdown
    assert Path("gate.history.svg").exists()
    html = Path("gate.html").read_text()
    assert "<svg" in html
    assert "02-b" in html


def test_help_imports_neither_the_core_nor_its_dependencies() -> None:
    """`failgate --help` builds the parser only: no pydantic, YAML, pytest or gate modules."""
    script = (
        "import sys\n"
        "from pytest_failgate.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    modules = done.stdout.split("\n")
    assert "pytest_failgate.cli" in modules
    heavy = [m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core", "yaml",
                                                       "pytest", "_pytest")
             or m.startswith(("pytest_failgate.core.gate.runner", "pytest_failgate.output"))]
    assert heavy == []
