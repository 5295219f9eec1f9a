"""A taxonomy (with a run's slices, ``per:`` populations and metrics) as one SQL query.

The query reads its source once. An inner select gives every case its deciding
position (``CASE`` in rule order: 0 passed, then each enabled rule, then the
fallback; ``CASE`` is lazy, so a rule is evaluated only on the cases that reach
it, as in Python), its flags, slice values, metric values and type violations.
The outer select counts them with ``GROUPING SETS``: one set per category, one
per (category, slice value) and one per (metric value, vacuous?), so counts,
slices and metric sums all come from the one scan. ``decode`` turns its rows
into a ``Tally``, the same object the Python reader builds.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING, Any

from ..base.classes import dataclass
from ..base.errors import FailgateError
from ..reports.read import ReadSpec
from ..taxonomy.expr import ExprError
from ..taxonomy.model import COMPOSITE, describe_kinds
from ..taxonomy.tally import MetricTally, SliceTally, Tally, _metric_tally, slice_text
from .dialects import DUCKDB, Dialect
from .sqlexpr import SqlExpr
from .sqltypes import INT
from .sqlvalue import SqlUnsupported, V

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from ..taxonomy import Taxonomy
    from ..taxonomy.model import Field
    from .sqltypes import SqlType

_JSON_KIND = {"bool": "bool", "int": "number", "float": "number", "str": "string",
              "list": "array", "struct": "object", "map": "object", "null": "null"}


class RuleNotExpressible(FailgateError):
    """A rule has no exact SQL form: the message names the rule and the reason."""


@dataclass(frozen=True)
class GateQuery:
    """The compiled query and what its columns mean."""

    sql: str
    categories: tuple[str, ...]  # by deciding position - 1 (enabled rules, then fallback)
    flags: tuple[str, ...]
    slices: tuple[str, ...]
    metrics: tuple[str, ...]
    violations: tuple[str, ...]  # messages of the type checks, by column
    absent: tuple[str, ...]  # taxonomy fields the source has no column for
    sometimes: tuple[str, ...]  # fields absent from some cases: counted per category
    id_sql: str  # a case's id as text (inside the inner select's FROM)
    decided_sql: str
    # ``WITH "_cases" AS (...)``: every case's deciding position (``_decided``), flags
    # (``_f<i>``), slice values (``s<i>``), metric values (``_m<i>``, ``_v<i>``), type
    # violations (``_x<i>``) and absent fields (``_a<i>``), which ``sql`` counts
    cte: str = ""
    first_ids: int = 0  # the last column: each category's first failing ids (0: none)


def _category_positions(taxonomy: Taxonomy) -> tuple[str, ...]:
    return (*(r.name for r in taxonomy.categories if r.enabled), taxonomy.fallback)


def compile_gate(taxonomy: Taxonomy, schema: Mapping[str, SqlType], source: str,
                 spec: ReadSpec | None = None, dialect: Dialect = DUCKDB,
                 position: str | None = None, raw_json: str | None = None,
                 first_ids: int = 0, first_positions: bool = False) -> GateQuery:
    """The gate query over ``source`` (a table name or a parenthesised query).

    With ``first_ids``, its last column holds each category's first ``first_ids`` failing
    case ids (by position, else by id) from the same scan: a bounded ``min_by``, so
    nothing proportional to the table is kept or returned. With ``first_positions``, it
    holds their positions instead, for an engine that looks a few rows up by position for
    less than reading every id in the scan (DuckDB's Parquet: the id column is most of
    what the gate query would read beyond the rules' columns)."""
    spec = spec or ReadSpec()
    defaults = {f.name: f.default for f in taxonomy.fields if f.default is not None}
    expr = SqlExpr(schema, defaults, dialect, raw_json)
    # the ceilings' expressions (per:, slices, metrics) are compiled without the
    # taxonomy's defaults in Python, so here too
    plain = SqlExpr(schema, {}, dialect, raw_json)
    q = dialect.ident

    def predicate(name: str, text: str | None, compiler: SqlExpr = expr) -> str:
        if text is None:
            raise RuleNotExpressible(f"rule '{name}' is a Python function, not an expression; "
                                     "only rules written in the expression language run in SQL")
        try:
            return compiler.predicate(text)
        except SqlUnsupported as exc:
            raise RuleNotExpressible(f"rule '{name}' ({text.strip()}) has no exact SQL form: "
                                     f"{exc}") from None

    def value(name: str, text: str, compiler: SqlExpr = plain) -> V:
        try:
            return compiler.value(text)
        except SqlUnsupported as exc:
            raise RuleNotExpressible(f"{name} ({text.strip()}) has no exact SQL form: {exc}"
                                     ) from None

    rules = [r for r in taxonomy.categories if r.enabled]
    whens = " ".join(f"WHEN {predicate(r.name, r.text)} THEN {i}"
                     for i, r in enumerate(rules, start=1))
    failed = predicate(taxonomy.failed.name, taxonomy.failed.text)
    decided = f"CASE WHEN NOT {failed} THEN 0 {whens} ELSE {len(rules) + 1} END"
    columns = [f"{decided} AS {q('_decided')}"]

    flags = [(c.name, c.text, expr) for c in taxonomy.caveats]
    flags += [(text, compiled.text, plain) for text, compiled in spec.measures.items()]
    for i, (name, text, compiler) in enumerate(flags):
        columns.append(f"{predicate(name, text, compiler)} AS {q(f'_f{i}')}")

    for i, (name, compiled) in enumerate(spec.slicers.items()):
        v = value(f"slice '{name}'", compiled.text)
        if not v.type.scalar:
            raise RuleNotExpressible(f"slice '{name}' is a {v.type.describe()}; SQL engines "
                                     "slice by a string, number or boolean")
        columns.append(f"{v.sql} AS {q(f's{i}')}")

    violations: list[str] = []
    taxonomy_metrics = {metric.name: metric for metric in taxonomy.metrics}
    for i, (name, metric) in enumerate(spec.metrics.items()):
        # a floor named like a taxonomy metric measures that metric, as in Python
        mine = taxonomy_metrics.get(name)
        if mine is not None and mine.text is None:
            raise RuleNotExpressible(f"metric '{name}' is a Python function, not an expression")
        v = (value(f"metric '{name}'", mine.text, expr) if mine is not None and mine.text
             else value(f"metric '{name}'", metric.value.text))
        if v.type.kind not in ("int", "float", "null", "bool"):
            raise RuleNotExpressible(f"metric '{name}' is a {v.type.describe()}; a metric value "
                                     "is true/false, a number or null")
        if v.type.kind == "bool":  # true counts 1, false 0 (``metric_number``)
            v = V(dialect.as_int(v.sql), INT)
        if metric.substantive is not None:
            own = (taxonomy.substantive is not None
                   and metric.substantive is taxonomy.substantive.predicate)
            substantive = predicate(f"substantive of metric '{name}'", metric.substantive_text,
                                    expr if own else plain)
            vacuous = f"(coalesce({v.sql} = 1, FALSE) AND NOT {substantive})"
        else:
            vacuous = "FALSE"
        columns += [f"{v.sql} AS {q(f'_m{i}')}", f"{vacuous} AS {q(f'_v{i}')}"]
        if v.type.kind == "float":
            bad = f"({dialect.isnan(v.sql)} OR abs({v.sql}) = {dialect.number(math.inf)})"
            columns.append(f"coalesce({bad}, FALSE) AS {q(f'_x{len(violations)}')}")
            violations.append(f"metric {name}: a value is NaN or infinite; a metric value is "
                              "a number or null (not applicable)")

    for path in taxonomy.required:  # a case without them is not this taxonomy's
        try:
            lacking = f"NOT {expr.predicate(f'has({path})')}"
        except (SqlUnsupported, ExprError):
            raise RuleNotExpressible(f"the required field '{path}' has no SQL form") from None
        columns.append(f"{lacking} AS {q(f'_x{len(violations)}')}")
        violations.append(f"no '{path}', which taxonomy {taxonomy.name} requires")

    for fld in taxonomy.fields:
        for test, message in _type_checks(fld, schema, expr, dialect):
            columns.append(f"{test} AS {q(f'_x{len(violations)}')}")
            violations.append(message)

    sometimes = tuple(f.name for f in taxonomy.fields if f.name in schema)
    for i, name in enumerate(sometimes):
        columns.append(f"NOT {expr.present(name)} AS {q(f'_a{i}')}")

    id_sql = _case_id(taxonomy, schema, expr, dialect, position, violations, columns)
    columns.append(f"{id_sql} AS {q('_id')}")
    if position is not None:
        columns.append(f"{position} AS {q('_pos')}")

    dims = [q("_decided"), *(q(f"s{i}") for i in range(len(spec.slicers)))]
    metric_dims = [d for i in range(len(spec.metrics)) for d in (q(f"_m{i}"), q(f"_v{i}"))]
    sets = [f"({q('_decided')})"]
    sets += [f"({q('_decided')}, {q(f's{i}')})" for i in range(len(spec.slicers))]
    sets += [f"({q(f'_m{i}')}, {q(f'_v{i}')})" for i in range(len(spec.metrics))]
    all_dims = [*dims, *metric_dims]
    selects = [*all_dims, *(f"grouping({d})" for d in all_dims), "count(*)"]
    selects += [f"count(*) FILTER (WHERE {q(f'_f{i}')})" for i in range(len(flags))]
    selects += [f"count(*) FILTER (WHERE {q(f'_x{i}')})" for i in range(len(violations))]
    selects += [f"count(*) FILTER (WHERE {q(f'_a{i}')})" for i in range(len(sometimes))]
    if first_ids:
        order = q("_pos") if position is not None else q("_id")
        kept = q("_pos") if first_positions and position is not None else q("_id")
        selects.append(f"min_by({kept}, {order}, {int(first_ids)}) "
                       f"FILTER (WHERE {q('_decided')} > 0)")
    inner = ",\n    ".join(columns)
    cte = f"WITH {q('_cases')} AS (\n  SELECT\n    {inner}\n  FROM {source}\n)\n"
    sql = (f"{cte}SELECT {', '.join(selects)}\nFROM {q('_cases')}\n"
           f"GROUP BY GROUPING SETS ({', '.join(sets)})")
    absent = tuple(f.name for f in taxonomy.fields if f.name not in schema)
    return GateQuery(sql, _category_positions(taxonomy), tuple(n for n, _, _ in flags),
                     tuple(spec.slicers), tuple(spec.metrics), tuple(violations), absent,
                     sometimes, id_sql, decided, cte, first_ids)


def _type_checks(fld: Field, schema: Mapping[str, SqlType], expr: SqlExpr,
                 dialect: Dialect) -> list[tuple[str, str]]:
    """SQL tests that find values the taxonomy's ``types:`` rejects (Python's check)."""
    if fld.name not in schema or fld.kinds is None:
        return []
    column = schema[fld.name]
    sql = dialect.ident(fld.name)
    kind = _JSON_KIND.get(column.kind)
    wanted = describe_kinds(fld.kinds)
    checks = []
    if kind is None or kind not in fld.kinds:
        checks.append((f"({sql} IS NOT NULL)",
                       f"'{fld.name}' is a {column.describe()} column; expected {wanted}"))
    if "null" not in fld.kinds:  # a present null (only JSON keeps null apart from absent)
        checks.append((f"({expr.present(fld.name)} AND {sql} IS NULL)",
                       f"'{fld.name}' is null; expected {wanted}"))
    if column.kind == "list" and fld.item_kinds is not None and column.item is not None:
        var = expr.var()
        item = _JSON_KIND.get(column.item.kind)
        items = describe_kinds(fld.item_kinds)
        if item is None or (item not in fld.item_kinds and column.item.kind != "null"):
            checks.append((dialect.some_item(sql, var, null=False),
                           f"'{fld.name}' holds {column.item.describe()} items; expected a "
                           f"list of {items}"))
        if "null" not in fld.item_kinds:
            checks.append((dialect.some_item(sql, var, null=True),
                           f"'{fld.name}' holds a null item; expected a list of {items}"))
    return checks


def _case_id(taxonomy: Taxonomy, schema: Mapping[str, SqlType], expr: SqlExpr,
             dialect: Dialect, position: str | None, violations: list[str],
             columns: list[str]) -> str:
    """A case's id as text: the first id field with a value, else ``#position``."""
    parts = []
    for name in taxonomy.id_fields:
        if COMPOSITE in name:
            raise RuleNotExpressible(f"the composite case id '{name}' is read by the Python "
                                     "readers only; SQL engines take one id column")
        root = name.split(".")[0]
        if root not in schema:
            continue
        try:
            v = expr.value(name)
        except SqlUnsupported:
            continue
        if v.type.kind == "str":
            parts.append(v.sql)
        elif v.type.kind == "int":
            parts.append(dialect.to_text(v.sql))
        elif v.type.kind != "null":
            columns.append(f"({v.sql} IS NOT NULL) AS {dialect.ident(f'_x{len(violations)}')}")
            violations.append(f"the case id '{name}' is a {v.type.describe()}; it must be a "
                              "string or an integer")
    if position is not None:
        parts.append(f"'#' || {dialect.to_text(position)}")
    if not parts:
        return "CAST(NULL AS VARCHAR)" if dialect.name == "duckdb" else "CAST(NULL AS STRING)"
    return parts[0] if len(parts) == 1 else f"coalesce({', '.join(parts)})"


CANDIDATES = 1000
"""Repeated id hashes looked up by text as a list of literals; past it, as a subquery."""


def duplicate_id(run: Callable[[str], Sequence[Sequence[Any]]], ids: str, hash_function: str,
                 ordered: bool = False, nulls: bool = True) -> tuple[str, int] | None:
    """A case id held by more than one case (and how many), or None. ``ids`` is a query
    selecting ``_id``; ``run`` runs a query in the engine.

    Exact in two steps: first the 64-bit hashes (``hash_function``) held more than once,
    whose table is a fraction of one holding the ids; then the ids behind those hashes
    alone, compared as text (none but the candidates is grouped, however many there
    are). ``ordered`` finds the repeated hashes by sorting them and comparing each with
    the one before (a window), where the engine sorts integers for less than it groups
    them (DuckDB: about 0.6 of the CPU and 0.7 of the memory); else by grouping them,
    which a distributed engine (Spark) spreads where a global window would not.
    ``nulls=False``: no id is null (a case without one is named by its position), so the
    hashes are taken without a test per case.
    """
    hashed = f"{hash_function}(_id)"
    hashes = f"SELECT {hashed} AS _h FROM ({ids}) _ids"
    if nulls:
        hashes += " WHERE _id IS NOT NULL"
    if ordered:
        repeated = (f"SELECT DISTINCT _h FROM (SELECT _h, lag(_h) OVER (ORDER BY _h) AS _p "
                    f"FROM ({hashes}) _hs) _sorted WHERE _h = _p")
    else:
        # (a null hash, of null ids hashed without the test, names no id; ``_h = _p``
        # above holds for none)
        repeated = (f"SELECT _h FROM ({hashes}) _hs GROUP BY _h HAVING count(*) > 1 AND _h "
                    "IS NOT NULL")
    found_hashes = [h for (h,) in run(f"{repeated} LIMIT {CANDIDATES + 1}")]
    if not found_hashes:
        return None
    within = (f"({repeated})" if len(found_hashes) > CANDIDATES else
              f"({', '.join(str(int(h)) for h in found_hashes)})")
    found = run(f"SELECT _id, count(*) FROM ({ids}) _ids WHERE _id IS NOT NULL AND {hashed} "
                f"IN {within} GROUP BY _id HAVING count(*) > 1 ORDER BY _id LIMIT 1")
    return (str(found[0][0]), int(found[0][1])) if found else None


@dataclass
class EngineCounts:
    """What the gate query returned, decoded."""

    tally: Tally
    violations: list[tuple[str, int]]


def decode(query: GateQuery, taxonomy: Taxonomy, rows: Sequence[Sequence[Any]]) -> EngineCounts:
    """The gate query's rows as a ``Tally`` (with the first ids if the query has them)."""
    n_slices, n_metrics = len(query.slices), len(query.metrics)
    n_dims = 1 + n_slices + 2 * n_metrics
    positions = query.categories
    counts = dict.fromkeys(taxonomy.category_names, 0)
    n_cases = 0
    flags = dict.fromkeys(query.flags, 0)
    flagged: dict[str, dict[str, int]] = {name: {} for name in query.flags}
    by_position: dict[int, int] = {}
    slices: dict[str, dict[str, SliceTally]] = {name: {} for name in query.slices}
    metric_values: list[Counter[tuple[Any, bool]]] = [Counter() for _ in range(n_metrics)]
    violations = [0] * len(query.violations)
    lacking: dict[int, list[int]] = {}  # deciding position -> cases lacking each field
    ids: dict[str, list[Any]] = {name: [] for name in taxonomy.category_names}
    for row in rows:
        dims, grouped = row[:n_dims], row[n_dims:2 * n_dims]
        count = row[2 * n_dims]
        rest = row[2 * n_dims + 1:]
        if not grouped[0] and all(grouped[1:1 + n_slices]):  # the category set
            decided = int(dims[0])
            n_cases += count
            by_position[decided] = by_position.get(decided, 0) + count
            category = positions[decided - 1] if decided else None
            if category is not None:
                counts[category] += count
                if query.first_ids:
                    ids[category] = list(row[-1] or [])
            for i, name in enumerate(query.flags):
                flags[name] += rest[i]
                if category is not None and rest[i]:
                    flagged[name][category] = flagged[name].get(category, 0) + rest[i]
            for i in range(len(violations)):
                violations[i] += rest[len(query.flags) + i]
            at = len(query.flags) + len(violations)
            lacking[decided] = list(rest[at:at + len(query.sometimes)])
            continue
        for i, name in enumerate(query.slices):
            if not grouped[1 + i] and not grouped[0]:
                text = slice_text(dims[1 + i])
                cases = slices[name].get(text)
                if cases is None:
                    cases = slices[name][text] = SliceTally(
                        counted=dict.fromkeys(taxonomy.category_names, 0),
                        ids={c: [] for c in taxonomy.category_names})
                cases.n_cases += count
                if dims[0]:
                    assert cases.counted is not None
                    cases.counted[positions[int(dims[0]) - 1]] += count
        for i in range(n_metrics):
            at = 1 + n_slices + 2 * i
            if not grouped[at]:
                metric_values[i][dims[at], bool(dims[at + 1])] += count
    for values in slices.values():  # a deterministic order: by the value's text
        ordered = dict(sorted(values.items()))
        values.clear()
        values.update(ordered)
    examined = {rule.name: 0 for rule in taxonomy.rules}
    enabled = [r for r in taxonomy.categories if r.enabled]
    for decided, count in by_position.items():
        examined[taxonomy.failed.name] += count
        for rule in enabled[:decided]:
            examined[rule.name] += count
    missing: dict[str, dict[str, int]] = {rule.name: {} for rule in taxonomy.rules}
    absent = {f.name: (n_cases if f.name in query.absent else 0) for f in taxonomy.fields}
    for decided, counts_lacking in lacking.items():
        reached = [taxonomy.failed, *enabled[:decided]]
        for name, n in zip(query.sometimes, counts_lacking, strict=True):
            absent[name] += n
            for rule in reached:
                if n and name in rule.reads:
                    missing[rule.name][name] = missing[rule.name].get(name, 0) + n
    for rule in taxonomy.rules:
        for name in rule.reads:
            if name in query.absent and examined[rule.name]:
                missing[rule.name][name] = examined[rule.name]
    metrics: dict[str, MetricTally] = {name: _metric_tally(values) for name, values in
                                       zip(query.metrics, metric_values, strict=True)}
    tally = Tally(
        taxonomy=taxonomy, n_cases=n_cases, counts=counts,
        ids=ids, examined=examined,
        missing=missing, examples={name: [] for name in taxonomy.category_names},
        flags=flags, flagged=flagged, slices=slices,
        absent=absent,
        metrics=metrics,
    )
    found = [(message, n) for message, n in zip(query.violations, violations, strict=True) if n]
    return EngineCounts(tally, found)
