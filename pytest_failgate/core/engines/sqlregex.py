"""Regular expressions that Python's ``re``, RE2 (DuckDB) and Java (Spark) read alike.

``matches()`` searches with Python's ``re``; the engines search with their own
regex libraries. A pattern is passed to them only when it is built from pieces
all three read the same way; ``.`` is rewritten to ``[^\\n]`` (Java's ``.`` also
stops at ``\\r`` and Unicode line separators, Python's only at ``\\n``). ``$``
(Python's matches before a final newline), ``\\d \\w \\s \\b`` (Unicode in Python, ASCII
in RE2 and Java), look-arounds and back-references are refused.
"""

from __future__ import annotations

import re

# A regular expression is passed through only when built from these pieces, which
# Python's re, RE2 and Java read alike ('.' is rewritten to exclude only '\n').
_TOKEN = re.compile(
    r"\\[.^$*+?()\[\]{}|\\/-]"  # an escaped metacharacter
    r"|\[\^?\]?(?:\\[\\\]\-^\[]|[^\\\]\[])*\]"  # a class
    r"|\(\?:|[()|*+?]|\{\d+(?:,\d*)?\}|\.|\^"  # groups, quantifiers, '.', '^'
    r"|[^\\\[\](){}.^$*+?|]"  # a literal character
)


def portable_regex(pattern: str, unsupported: type[Exception]) -> str:
    """``pattern`` for RE2 and Java with Python's meaning, or ``unsupported`` raised."""
    out: list[str] = []
    position = 0
    while position < len(pattern):
        match = _TOKEN.match(pattern, position)
        if match is None:
            raise unsupported(
                f"the regular expression {pattern!r} uses '{pattern[position:position + 2]}', "
                "which Python, RE2 and Java do not read alike (portable: literals, '.', "
                "classes [...], * + ? {m,n}, |, (...), (?:...), ^)")
        token = match.group()
        if token.startswith("[") and ("\\" in token[1:-1].replace("\\\\", "")
                                      and re.search(r"\\[dDwWsSbB]", token)):
            raise unsupported(f"the class {token} has no portable form")
        if token == "^" and position != 0:
            raise unsupported("'^' is portable only at the start of the pattern")
        out.append("[^\\n]" if token == "." else token)
        position = match.end()
    return "".join(out)
