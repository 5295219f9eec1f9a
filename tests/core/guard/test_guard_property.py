"""A property: any edit of a ceilings file tightens, loosens or leaves it equal, and the
guard says which, as an independent oracle of docs/ci.md's guard table does.

The oracle enumerates every item the gate would build (each report, the defaults, and
a declared slice; categories, a group and ``total``) and the limit that governs it,
straight from the entries as written: the slice's own entry, else the report's, else
the default; no entry is 0 for a category and no item for ``total`` or a group.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pytest_failgate.core.guard.loosening import loosenings, parse_version

NAMES = ["verifier_false_negative", "retrieval_miss", "unknown", "total"]
SLICE = "query_type=comparison"
REPORTS = ["a", "real100/b"]
RATES = ["0", "0.1", "0.25", "0.5", "1"]

Value = dict[str, Any]  # {"max": int} / {"max_rate": str} / both, "reason": str optional
Section = dict[str, Value]
# ("defaults" | report, slice or "") -> name -> value
Config = dict[tuple[str, str], Section]

values = st.one_of(
    st.builds(lambda n: {"max": n}, st.integers(0, 20)),
    st.builds(lambda r: {"max_rate": r}, st.sampled_from(RATES)),
    st.builds(lambda n, r: {"max": n, "max_rate": r}, st.integers(0, 20), st.sampled_from(RATES)),
)
SCOPES = [(scope, s) for scope in ["defaults", *REPORTS] for s in ("", SLICE)]
sections = st.dictionaries(st.sampled_from(NAMES), values, max_size=3)
configs = st.fixed_dictionaries({scope: sections for scope in SCOPES})
Edit = tuple[tuple[str, str], str, str, int, str]
edits = st.lists(st.tuples(st.sampled_from(SCOPES), st.sampled_from(NAMES),
                           st.sampled_from(["raise", "lower", "remove", "add", "rate", "unrate"]),
                           st.integers(1, 9), st.sampled_from(RATES)), min_size=1, max_size=4)


def apply_edits(config: Config, changes: list[Edit], reason: bool) -> Config:
    new = {scope: {name: dict(value) for name, value in section.items()}
           for scope, section in config.items()}
    for scope, name, action, step, rate in changes:
        section = new[scope]
        value = section.get(name)
        if action == "remove":
            section.pop(name, None)
            continue
        if value is None or action == "add":
            section[name] = {"max": step}
        elif action == "raise" and "max" in value:
            value["max"] += step
        elif action == "lower" and "max" in value:
            value["max"] = max(0, value["max"] - step)
        elif action == "rate":
            value["max_rate"] = rate
        elif action == "unrate" and "max" in value:
            value.pop("max_rate", None)
    if reason:  # every entry says why, in words the old version did not have
        for section in new.values():
            for value in section.values():
                value["reason"] = "reviewed"
    return new


def text_of(config: Config, reason: bool) -> str:
    lines = ["version: 1", "taxonomy: rag", f"slices: [{SLICE.split('=')[0]}]"]
    if reason:
        lines.append('reason: "reviewed"')

    def block(section: Section, indent: str) -> list[str]:
        out = []
        for name, value in section.items():
            flow = ", ".join(f"{k}: {v}" if k != "reason" else f'{k}: "{v}"'
                             for k, v in value.items())
            out.append(f"{indent}{name}: {{{flow}}}")
        return out

    defaults = block(config[("defaults", "")], "  ")
    sliced = block(config[("defaults", SLICE)], "    ")
    if defaults or sliced:
        lines.append("ceilings:")
        lines += defaults + ([f"  {SLICE}:", *sliced] if sliced else [])
    reports = []
    for report in REPORTS:
        own = block(config[(report, "")], "    ")
        sliced = block(config[(report, SLICE)], "      ")
        if own or sliced:
            reports += [f"  {report}:", *own, *([f"    {SLICE}:", *sliced] if sliced else [])]
    if reports:
        lines += ["reports:", *reports]
    return "\n".join(lines) + "\n"


Limit = tuple[int | None, Fraction | None] | None  # None: no item


def effective(config: Config, report: str, slice_: str, name: str) -> Limit:
    chain = []
    if slice_:
        chain += [config.get((report, slice_), {}).get(name),
                  config[("defaults", slice_)].get(name)]
    chain += [config.get((report, ""), {}).get(name), config[("defaults", "")].get(name)]
    value = next((v for v in chain if v is not None), None)
    if value is None:
        return None if name == "total" else (0, None)
    rate = value.get("max_rate")
    return value.get("max"), Fraction(rate) if rate is not None else None


def oracle(old: Config, new: Config) -> str:
    """'loosen', 'tighten' or 'equal', over every item the gate would build."""
    looser = tighter = False
    for report in ["defaults", *REPORTS]:
        for slice_ in ("", SLICE):
            for name in NAMES:
                was, now = effective(old, report, slice_, name), effective(new, report, slice_,
                                                                           name)
                if was is None:
                    tighter |= now is not None
                    continue
                now = now or (None, None)
                for a, b in zip(was, now, strict=True):
                    if a is not None and (b is None or b > a):
                        looser = True
                    elif b is not None and (a is None or b < a):
                        tighter = True
    return "loosen" if looser else "tighten" if tighter else "equal"


def check_edit(tmp_path: Path, base: Config, changes: list[Edit]) -> None:
    old_path, new_path = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old_path.write_text(text_of(base, reason=False))
    edited = apply_edits(base, changes, reason=False)
    new_path.write_text(text_of(edited, reason=False))
    old = parse_version(old_path)
    found = loosenings(old, parse_version(new_path))
    verdict = oracle(base, edited)
    event(verdict)  # `pytest --hypothesis-show-statistics` shows how often each case came up
    if verdict == "loosen":
        assert found, (text_of(base, False), text_of(edited, False))
        assert not any(change.excused for change in found)
        # the same edit, every entry (and the file) saying why: a reviewed loosening passes
        new_path.write_text(text_of(apply_edits(base, changes, reason=True), reason=True))
        assert all(change.excused for change in loosenings(old, parse_version(new_path)))
    else:
        assert found == [], (verdict, text_of(base, False), text_of(edited, False), found)


SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.function_scoped_fixture,
                                                        HealthCheck.too_slow]}


@pytest.mark.slow
@settings(max_examples=60, **SETTINGS)  # type: ignore[arg-type]
@given(base=configs, changes=edits)
def test_random_edits_tighten_loosen_or_keep_and_the_guard_agrees(
    tmp_path: Path, base: Config, changes: list[Edit]
) -> None:
    check_edit(tmp_path, base, changes)


@pytest.mark.slow
@settings(max_examples=1000, **SETTINGS)  # type: ignore[arg-type]
@given(base=configs, changes=edits)
def test_random_edits_agree_with_the_oracle_at_length(
    tmp_path: Path, base: Config, changes: list[Edit]
) -> None:
    check_edit(tmp_path, base, changes)
