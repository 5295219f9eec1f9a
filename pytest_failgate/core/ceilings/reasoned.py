"""A reason written on every entry of a new ceilings file (``failgate init --force
--reason``).

An existing file written again from this run's counts (an exact file moving onto a noise
band) raises ceilings: the guard names each raise, and the noise band turned on, as a
loosening, which passes review with a reason written in the same change. ``init``'s own
text (``rewrite.init_text``) has one shape, so the reason goes on each of its entries
(``max``/``observed``/``allowance`` entries get a ``reason:`` line, an exact count becomes
``{max: N, reason: ...}``) and at the top, for what has no entry (the noise band).
"""

from __future__ import annotations

import json
import re

_EXACT = re.compile(r"^( +)([^\s:#][^:#]*): ([0-9]+)$")
_ALLOWANCE = re.compile(r"^( +)allowance: [0-9]+$")
# the indent of an entry's name under each section (``reports:`` names the report first)
_DEPTH = {"ceilings": 2, "reports": 4}


def with_reason(text: str, reason: str) -> str:
    """``text`` (a new ceilings file as init writes it) with ``reason`` on every entry of
    ``ceilings:`` and ``reports:`` and as its top-level ``reason:``."""
    quoted = json.dumps(reason)  # a JSON string is a YAML double-quoted scalar
    lines: list[str] = []
    depth = None
    for line in text.splitlines():
        if line and not line[0].isspace():
            depth = _DEPTH.get(line.split(":", 1)[0])
            lines.append(line)
            if line.startswith("version:"):
                lines.append(f"reason: {quoted}")
            continue
        allowance = _ALLOWANCE.match(line)
        exact = _EXACT.match(line)
        if depth is not None and allowance is not None \
                and len(allowance.group(1)) == depth + 2:
            lines += [line, f"{allowance.group(1)}reason: {quoted}"]
        elif depth is not None and exact is not None and len(exact.group(1)) == depth:
            indent, key, count = exact.groups()
            lines.append(f"{indent}{key}: {{max: {count}, reason: {quoted}}}")
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"
