"""The loosening guard: every raise and removal is caught; every tightening passes."""

from __future__ import annotations

import random
import subprocess
from functools import partial
from pathlib import Path

import pytest
from helpers import write_ceilings

from pytest_failgate.cli import main
from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.guard import loosening
from pytest_failgate.core.guard.loosening import loosenings, parse_version
from pytest_failgate.options import OPTIONS

# the guard as the front ends call it: with the option table
guard = partial(loosening.guard, options=OPTIONS)

NAMES = ["verifier_false_negative", "retrieval_miss", "unknown", "total"]
REPORTS = ["a", "real100/b"]


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "ci@example.com")
    git(tmp_path, "config", "user.name", "ci")
    return tmp_path


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


Entries = dict[str, dict[str, object]]  # scope ("" = defaults) -> name -> value


def _write(path: Path, entries: Entries) -> None:
    write_ceilings(path, entries.get("", {}),
                   {scope: names for scope, names in entries.items() if scope and names})


def _effective(entries: Entries, scope: str, name: str) -> tuple[object, object]:
    value = entries.get(scope, {}).get(name, entries.get("", {}).get(name))
    if value is None:
        return (None if name == "total" else 0), None
    if isinstance(value, dict):
        return value.get("max"), value.get("max_rate")
    return value, None


def _loosened(old: Entries, new: Entries) -> bool:
    """The oracle: does any effective limit allow more now? (None means unlimited.)"""
    scopes = {""} | set(old) | set(new)
    for scope in scopes:
        names = set(old.get(scope, {})) | set(new.get(scope, {}))
        for name in names:
            for was, now in zip(_effective(old, scope, name), _effective(new, scope, name),
                                strict=True):
                if now is None and was is not None:
                    return True
                if was is not None and now is not None and now > was:  # type: ignore[operator]
                    return True
    return False


def _random_entries(rng: random.Random) -> Entries:
    entries: Entries = {"": {}}
    for name in NAMES:
        if rng.random() < 0.7:
            entries[""][name] = rng.randint(0, 50)
    for report in REPORTS:
        entries[report] = {name: rng.randint(0, 50) for name in NAMES if rng.random() < 0.3}
    return entries


def _edit(entries: Entries, rng: random.Random) -> Entries:
    edited = {scope: dict(names) for scope, names in entries.items()}
    for _ in range(rng.randint(1, 3)):
        scope = rng.choice(["", *REPORTS])
        name = rng.choice(NAMES)
        action = rng.choice(["raise", "lower", "remove", "add", "rate"])
        current = edited.setdefault(scope, {}).get(name)
        if action == "remove":
            edited[scope].pop(name, None)
        elif action == "rate":
            edited[scope][name] = {"max": rng.randint(0, 50), "max_rate": 0.25}
        elif action in ("raise", "lower") and isinstance(current, int):
            edited[scope][name] = max(0, current + (rng.randint(1, 9) if action == "raise"
                                                     else -rng.randint(1, 9)))
        else:
            edited[scope][name] = rng.randint(0, 50)
    return edited


@pytest.mark.slow
def test_every_generated_edit_is_judged_like_the_oracle(tmp_path: Path) -> None:
    rng = random.Random(5)
    loose = tight = 0
    for _ in range(400):
        before = _random_entries(rng)
        after = _edit(before, rng)
        _write(tmp_path / "old.yaml", before)
        _write(tmp_path / "new.yaml", after)
        old = parse_version(tmp_path / "old.yaml")
        new = parse_version(tmp_path / "new.yaml")
        expected = _loosened(before, after)
        assert bool(loosenings(old, new)) == expected, (before, after)
        loose += expected
        tight += not expected
    # both kinds were exercised
    assert loose > 50
    assert tight > 50


def test_a_loosening_with_a_reason_written_in_this_change_passes(repo: Path) -> None:
    path = write_ceilings(repo / "ceilings.yaml", {"unknown": 5, "retrieval_miss": 3})
    commit(repo, "base")
    write_ceilings(path, {"unknown": {"max": 9, "reason": "new eval set adds hard cases"},
                          "retrieval_miss": 2})
    result = guard(path, "HEAD")
    assert result.passed
    assert [(c.label, c.old, c.new) for c in result.changes] == [("ceilings.unknown", 5, 9)]


def test_a_reason_carried_over_from_the_ref_does_not_excuse_a_new_raise(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    path = write_ceilings(repo / "ceilings.yaml", {"unknown": {"max": 5, "reason": "old"}})
    commit(repo, "base")
    write_ceilings(path, {"unknown": {"max": 6, "reason": "old"}})
    result = guard(path, "HEAD")
    assert not result.passed
    lines = list(result.lines())
    # one loosening, in the singular; the kept reason is named, not "no reason written"
    assert lines[0].startswith("guard: 1 of 1 loosening in ceilings.yaml since HEAD has no ")
    assert lines[1].endswith("ceilings.unknown: 5 -> 6  (its reason is the one written for the "
                             "old limit, which does not cover this change: write why this "
                             "change loosens it)")
    assert "(no reason written)" not in "\n".join(lines)


def test_one_excused_loosening_is_counted_in_the_singular(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    path = write_ceilings(repo / "ceilings.yaml", {"unknown": 5})
    commit(repo, "base")
    write_ceilings(path, {"unknown": {"max": 6, "reason": "harder eval set"}})
    assert next(guard(path, "HEAD").lines()) == (
        "guard: 1 loosening in ceilings.yaml since HEAD, with a reason written in this change:")


def test_guard_output_lists_each_loosening_old_to_new(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_ceilings(repo / "ceilings.yaml", {"unknown": 5, "total": 20},
                          {"a": {"unknown": 1}})
    commit(repo, "base")
    write_ceilings(path, {"unknown": 7})
    monkeypatch.chdir(repo)
    code = main(["guard", "--base", "main"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert out[0] == ("guard: 3 of 3 loosenings in ceilings.yaml since main have no "
                      "reason written in this change:")
    assert out[1:4] == [
        "  ceilings.yaml:4 ceilings.unknown: 5 -> 7  (no reason written)",
        "  ceilings.yaml (entry removed) ceilings.total: 20 -> not limited  (no reason written)",
        "  ceilings.yaml (entry removed) reports.a.unknown: 1 -> 7  (no reason written)",
    ]


def test_guard_works_in_a_shallow_checkout_once_the_ref_is_fetched(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    write_ceilings(repo / "ceilings.yaml", {"unknown": 5})
    commit(repo, "base")
    git(repo, "checkout", "-q", "-b", "feature")
    write_ceilings(repo / "ceilings.yaml", {"unknown": 8})
    commit(repo, "loosen")
    clone = tmp_path_factory.mktemp("ci") / "checkout"
    git(repo.parent, "clone", "-q", "--depth=1", "--branch=feature", f"file://{repo}",
        str(clone))
    with pytest.raises(FailgateError, match=r"unknown git ref 'origin/main'.*git fetch"):
        guard(clone / "ceilings.yaml", "origin/main")
    git(clone, "fetch", "-q", "--depth=1", "origin", "main:refs/remotes/origin/main")
    result = guard(clone / "ceilings.yaml", "origin/main")
    assert not result.passed
    assert [(c.old, c.new) for c in result.changes] == [(5, 8)]


def test_a_ceilings_file_new_in_this_change_passes(repo: Path) -> None:
    write_ceilings(repo / "other.yaml", {"unknown": 5})
    commit(repo, "base")
    path = write_ceilings(repo / "ceilings.yaml", {"unknown": 50})
    result = guard(path, "HEAD")
    assert result.passed
    assert result.new_file


def test_a_malformed_version_at_the_ref_is_a_clear_error(repo: Path) -> None:
    path = repo / "ceilings.yaml"
    path.write_text("version: 1\nceilings:\n  unknown: lots\n")
    commit(repo, "base")
    write_ceilings(path, {"unknown": 5})
    with pytest.raises(FailgateError, match=r"the version at HEAD: ceilings\.unknown: "):
        guard(path, "HEAD")


def test_a_raised_true_max_is_a_loosening_and_a_lowered_one_is_not(repo: Path) -> None:
    path = write_ceilings(repo / "ceilings.yaml",
                          {"retrieval_miss": {"max": 60, "true_max": 106}, "unknown": 5})
    commit(repo, "base")
    write_ceilings(path, {"retrieval_miss": {"max": 60, "true_max": 120}, "unknown": 5})
    result = guard(path, "HEAD")
    assert not result.passed
    assert [(c.label, c.old, c.new) for c in result.changes] == [
        ("ceilings.retrieval_miss.true_max", 106, 120)]
    write_ceilings(path, {"retrieval_miss": {"max": 60, "true_max": 90}, "unknown": 5})
    assert guard(path, "HEAD").passed
