"""``matches()``: Python's regular expressions, searched without backtracking."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.taxonomy.expr import ExprError, compile_expr
from pytest_failgate.core.taxonomy.expr.regex import MAX_STATES, UnsupportedPattern, compile_search
from pytest_failgate.core.taxonomy.files import load_taxonomy_file

REPEATS = ["", "*", "+", "?", "{2}", "{1,3}", "*?", "{0,}"]
ATOMS = ["a", "b", ".", "[ab]", "[^a]", "\\d", "\\w", "\\s", "\\n", "[a-c\\d]", "(?:ab)", "é"]


@st.composite
def a_pattern(draw: st.DrawFn, depth: int = 3) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        if depth and draw(st.booleans()):
            inner = draw(a_pattern(depth - 1))
            if draw(st.booleans()):
                inner += "|" + draw(a_pattern(depth - 1))
            atom = f"({inner})"
        else:
            atom = draw(st.sampled_from(ATOMS))
        parts.append(atom + draw(st.sampled_from(REPEATS)))
    anchors = draw(st.sampled_from([("", ""), ("^", ""), ("", "$"), ("^", "$"), ("\\A", "\\Z")]))
    return anchors[0] + "".join(parts) + anchors[1]


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(pattern=a_pattern(), text=st.text(st.sampled_from("abc1 \né"), max_size=12))
def test_matches_agrees_with_re_search(pattern: str, text: str) -> None:
    assert compile_search(pattern)(text) == (re.search(pattern, text) is not None)


@pytest.mark.parametrize(("pattern", "text"), [
    ("(a*$)[^a]", "1\n"), ("a$\n", "a\n"), ("$[^a]", "x\n"), ("$.", "\n"), ("a$$\n", "a\n"),
    ("$\n$", "b\n"), ("^$\n", "\n"), ("a$\\Z", "a\n"),
])
def test_dollar_before_a_final_newline_may_be_followed_by_more_pattern(
    pattern: str, text: str
) -> None:
    # `$` also holds before a final newline, and what follows it may consume that newline
    assert compile_search(pattern)(text) == (re.search(pattern, text) is not None)


def test_a_catastrophic_pattern_runs_in_linear_time() -> None:
    # (a+)+$ on "aaa...ab" takes minutes with re; here it is one pass over the text
    assert compile_search("(a+)+$")("a" * 50_000 + "b") is False
    assert compile_search("(a|aa)*c")("a" * 50_000) is False
    assert compile_search("(x+x+)+y")("x" * 50_000 + "y") is True


@pytest.mark.parametrize(("pattern", "why"), [
    ("(a)\\1", "backreference"), ("a(?=b)", "lookahead"), ("(?<!a)b", "lookbehind"),
    ("\\bword", "word boundaries"), ("(?i)abc", "inline flags"), ("(?>a+)b", "atomic group"),
    ("a++", "possessive"), ("(?:a{100}){200}", f"more than {MAX_STATES} states"),
])
def test_a_pattern_that_needs_backtracking_is_refused_at_load(pattern: str, why: str) -> None:
    if sys.version_info < (3, 11) and why in ("atomic group", "possessive"):
        # Python 3.10's own parser does not know these: refused as invalid instead
        with pytest.raises(re.error):
            compile_search(pattern)
        expected = "invalid regular expression"
    else:
        with pytest.raises(UnsupportedPattern, match=why):
            compile_search(pattern)
        expected = "unsupported regular expression"
    with pytest.raises(ExprError, match=expected) as caught:
        compile_expr(f"matches(answer, {pattern!r})")
    assert caught.value.col == 17  # the pattern's place in the rule


def test_a_refused_pattern_is_an_error_at_its_rule_in_the_taxonomy_file(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("name: t\nfailed: 'true'\ncategories:\n  - name: looping\n"
                    "    when: matches(answer, \"(a)\\\\1\")\n  - name: other\n")
    with pytest.raises(FailgateError, match="backreference") as caught:
        load_taxonomy_file(path)
    assert caught.value.path == path
    assert caught.value.line == 5


@pytest.mark.slow
def test_a_long_or_chain_compiles() -> None:
    # 32,000 terms: quadratic before (about a minute); linear now
    text = " or ".join(f"x == {i}" for i in range(32_000))
    assert compile_expr(text).function({"x": 31_999}) is True
