"""Integers of any length are one clear error naming file and place, never a traceback.

Python refuses to turn text of more than 4,300 digits into an integer (``ValueError``), a
number of hundreds of digits overflows the float it is shown or compared as
(``OverflowError``), and ``1.0e+99999999`` would build a hundred-million-digit integer.
Each is tried where a number is read: every numeric place of ``ceilings.yaml``, a noise
band, a report's case field and recorded counts, an Inspect archive's member names.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from helpers import case, run_cli, write_summary

HUGE = "9" * 5000
LONG = "9" * 400  # under Python's limit, past a float's range

PLACES = {
    "a ceiling": "ceilings:\n  unknown: {n}\n",
    "a max": "ceilings:\n  unknown: {{max: {n}}}\n",
    "a max_rate's numerator": "ceilings:\n  unknown: {{max_rate: 0.{n}}}\n",
    "a max_rate": "ceilings:\n  unknown: {{max_rate: {n}.5}}\n",
    "an allowance": "ceilings:\n  unknown: {{max: 3, observed: 1, allowance: {n}}}\n",
    "a ceiling's significance": "ceilings:\n  unknown: {{max_rate: 0.5, significance: {n}}}\n",
    "the file's significance": "significance: {n}\nceilings:\n  unknown: 3\n",
    "inconclusive": "inconclusive: {n}\nceilings:\n  unknown: 3\n",
    "a metric floor": "ceilings:\n  unknown: 3\nmetrics:\n  accuracy: {{min: {n}}}\n",
    "a floor's min_n": "ceilings:\n  unknown: 3\nmetrics:\n  accuracy: {{min: 0.5, min_n: {n}}}\n",
    "a slice's ceiling": "ceilings:\n  query_type=x:\n    unknown: {n}\n",
    "a report's ceiling": "reports:\n  r:\n    unknown: {n}\n",
    "a hex ceiling": "ceilings:\n  unknown: 0x{n}\n",
}


def _check(tmp_path: Path, capsys: pytest.CaptureFixture[str],
           monkeypatch: pytest.MonkeyPatch, body: str) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)
    write_summary(tmp_path / "run" / "r.json", [case("a")])
    (tmp_path / "ceilings.yaml").write_text("version: 1\ntaxonomy: rag\n" + body)
    code, out, err = run_cli(capsys, "check", "run")
    assert "Traceback" not in out + err
    return code, err


@pytest.mark.parametrize("place", PLACES)
def test_a_five_thousand_digit_number_anywhere_in_ceilings_is_one_error_at_its_place(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        place: str) -> None:
    body = PLACES[place].format(n=HUGE)
    code, err = _check(tmp_path, capsys, monkeypatch, body)
    line = 3 + body.split(HUGE)[0].count("\n")
    assert code == 2
    [message] = err.strip().splitlines()
    assert message.startswith(f"failgate: error: ceilings.yaml:{line}:")
    assert "numbers are limited to 4,300 digits" in message
    assert len(message) < 300


@pytest.mark.parametrize("place", [name for name, text in PLACES.items() if "0.{n}" not in text])
def test_a_four_hundred_digit_number_is_refused_before_a_float_overflows(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        place: str) -> None:
    code, err = _check(tmp_path, capsys, monkeypatch, PLACES[place].format(n=LONG))
    assert code == 2
    assert "numbers are below 10^300" in err


@pytest.mark.parametrize("number", ["1.0e+99999999", "1.0e+4000", "1.0e-99999999"])
def test_an_exponent_past_the_limit_is_refused_unread(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        number: str) -> None:
    code, err = _check(tmp_path, capsys, monkeypatch,
                       f"ceilings:\n  unknown: {{max_rate: {number}}}\n")
    assert code == 2
    assert f"ceilings.yaml:4:23: '{number}' is a number" in err


@pytest.mark.parametrize("number", ["2" + "0" * 299, "0." + "0" * 4290 + "1", "1.5e-300"])
def test_the_longest_numbers_allowed_still_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        number: str) -> None:
    """The controls: 300 digits before the point, 4,291 after it, a tiny exponent."""
    code, err = _check(tmp_path, capsys, monkeypatch, f"ceilings:\n  unknown: {number}\n"
                       if "." not in number else
                       f"ceilings:\n  unknown: {{max_rate: {number}}}\n")
    assert "numbers are" not in err
    assert code in (0, 1), err


@pytest.mark.parametrize("key", ["std", "mean", "min", "max", "n", "discordant"])
def test_a_huge_number_in_a_noise_band_is_one_error_naming_the_band(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        key: str) -> None:
    band = {"metric_band": {"mode:unknown": {"min": 0, "max": 2, "n": 5, "std": 1.0,
                                             "mean": 1.0, "discordant": 0},
                            "accuracy": {"min": 0.5, "max": 0.6, "n": 5}}}
    band["metric_band"]["mode:unknown"][key] = 10**400
    (tmp_path / "noise_band.json").write_text(json.dumps(band))
    code, err = _check(tmp_path, capsys, monkeypatch,
                       "noise: noise_band.json\nceilings:\n  unknown: 3\n")
    assert code == 2
    assert (f"noise_band.json: noise band: metric_band['mode:unknown']: {key} is a number of "
            "401 digits") in err
    band["metric_band"]["mode:unknown"][key] = 2  # the control
    (tmp_path / "noise_band.json").write_text(json.dumps(band))
    code, err = _check(tmp_path, capsys, monkeypatch,
                       "noise: noise_band.json\nceilings:\n  unknown: 3\n")
    assert "digits" not in err


@pytest.mark.parametrize("where", ["a case field a rule compares", "a recorded count"])
def test_a_huge_integer_in_a_report_is_one_error_naming_its_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        where: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run").mkdir()
    if where == "a recorded count":
        (tmp_path / "run" / "r.json").write_text(
            '{\n"failure_category_counts": {\n"unknown": ' + HUGE + "\n}\n}\n")
        line = 3
    else:
        (tmp_path / "run" / "r.jsonl").write_text(
            json.dumps(case("a")) + "\n" + json.dumps(case("b")).replace(
                '"accuracy": 1', '"accuracy": ' + HUGE) + "\n")
        line = 2
    (tmp_path / "ceilings.yaml").write_text("version: 1\ntaxonomy: rag\nceilings:\n  unknown: 3\n")
    code, out, err = run_cli(capsys, "check", "run")
    assert code == 2
    assert "Traceback" not in out + err
    assert f"r.json{'l' if line == 2 else ''}:{line}:" in out
    assert "a number too large to read (integers are limited to 4,300 digits)" in out


def test_an_inspect_member_named_with_five_thousand_digits_is_a_name(tmp_path: Path) -> None:
    """Sample members sort by number; a 5,000-digit id or epoch sorts by its digits."""
    from pytest_failgate.core.reports.inspect_ai import _read_eval

    header = {"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}}
    path = tmp_path / "log.eval"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(header))
        for sample_id, epoch in ((HUGE, "1"), ("10", HUGE), ("9", "1"), ("x", "1")):
            archive.writestr(f"samples/{sample_id}_epoch_{epoch}.json",
                             json.dumps({"id": sample_id[:9], "epoch": 1}))
    _, samples = _read_eval(path)
    assert [sample["id"] for sample in samples] == ["9", "999999999", "x", "10"]
