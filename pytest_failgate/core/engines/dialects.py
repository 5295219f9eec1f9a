"""How the few SQL primitives the rule compiler needs are spelt in DuckDB and Spark SQL.

Everything else the compiler emits is plain ANSI SQL (``CASE``, ``COALESCE``,
comparisons, arithmetic), which both engines read alike. Each primitive here is
written so that null and out-of-range inputs give null rather than an error in
Spark's ANSI mode (``try_element_at``), and so that ``len`` of null is never -1.
"""

from __future__ import annotations

import math

from ..base.classes import dataclass


@dataclass(frozen=True)
class Dialect:
    """DuckDB's spelling; ``SparkDialect`` overrides what Spark spells differently."""

    name: str = "duckdb"

    def ident(self, name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    def string(self, text: str) -> str:
        return "'" + text.replace("'", "''") + "'"

    def number(self, value: int | float) -> str:
        if isinstance(value, float):
            if math.isinf(value):
                return f"CAST('{'-' if value < 0 else ''}inf' AS DOUBLE)"
            if math.isnan(value):
                return "CAST('nan' AS DOUBLE)"
            return f"CAST({value!r} AS DOUBLE)"
        return str(value)

    def array(self, items: list[str]) -> str:
        return "[" + ", ".join(items) + "]"

    def struct_field(self, value: str, name: str) -> str:
        return f"struct_extract({value}, {self.string(name)})"

    def map_get(self, value: str, key: str) -> str:
        return f"map_extract_value({value}, {key})"

    def map_has(self, value: str, key: str) -> str:
        return f"coalesce(map_contains({value}, {key}), FALSE)"

    def list_get(self, value: str, index: int) -> str:
        return f"list_extract({value}, {index + 1 if index >= 0 else index})"

    def list_len(self, value: str) -> str:
        return f"coalesce(len({value}), 0)"

    def map_len(self, value: str) -> str:
        return f"coalesce(cardinality({value}), 0)"

    def str_len(self, value: str) -> str:
        return f"coalesce(length({value}), 0)"

    def non_ascii(self, value: str) -> str:
        return f"strlen({value}) <> length({value})"

    def exists(self, value: str, var: str, predicate: str) -> str:
        return f"coalesce(list_bool_or(list_transform({value}, lambda {var}: {predicate})), FALSE)"

    def filter(self, value: str, var: str, predicate: str) -> str:
        return f"list_filter({value}, lambda {var}: {predicate})"

    def some_item(self, value: str, var: str, null: bool) -> str:
        """A list holds a null item (``null``) or a non-null one; false for a null list.
        DuckDB counts the non-null items natively: a lambda over every item cost the
        10M-case gate a fifth of its time."""
        test = f"< len({value})" if null else "> 0"
        return f"coalesce(list_count({value}) {test}, FALSE)"

    def concat(self, left: str, right: str) -> str:
        return f"list_concat({left}, {right})"

    def distinct_len(self, value: str, var: str) -> str:
        """Distinct items of a list, null counted once (as in a Python set)."""
        nulls = self.exists(value, var, f"{var} IS NULL")
        return (f"(coalesce(len(list_distinct({value})), 0) + "
                f"CASE WHEN {nulls} THEN 1 ELSE 0 END)")

    def list_extreme(self, value: str, name: str) -> str:
        return f"list_{name}({value})"

    def starts(self, value: str, prefix: str) -> str:
        return f"starts_with({value}, {prefix})"

    def ends(self, value: str, suffix: str) -> str:
        return f"suffix({value}, {suffix})"

    def contains(self, value: str, part: str) -> str:
        return f"contains({value}, {part})"

    def search(self, value: str, pattern: str) -> str:
        return f"regexp_matches({value}, {self.string(pattern)})"

    def isnan(self, value: str) -> str:
        return f"isnan({value})"

    def nonfinite(self, value: str) -> str:
        """Whether a float is NaN or infinite (null for null)."""
        return f"(NOT isfinite({value}))"

    def raise_error(self, message: str) -> str:
        return f"error({self.string(message)})"

    def to_text(self, value: str) -> str:
        return f"CAST({value} AS VARCHAR)"

    def as_int(self, value: str) -> str:
        return f"CAST({value} AS BIGINT)"


@dataclass(frozen=True)
class SparkDialect(Dialect):
    name: str = "spark"

    def ident(self, name: str) -> str:
        return "`" + name.replace("`", "``") + "`"

    def string(self, text: str) -> str:
        # Spark SQL reads backslash escapes in string literals
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"

    def array(self, items: list[str]) -> str:
        return "array(" + ", ".join(items) + ")"

    def struct_field(self, value: str, name: str) -> str:
        return f"{value}.{self.ident(name)}"

    def map_get(self, value: str, key: str) -> str:
        return f"try_element_at({value}, {key})"

    def map_has(self, value: str, key: str) -> str:
        return f"coalesce(map_contains_key({value}, {key}), FALSE)"

    def list_get(self, value: str, index: int) -> str:
        return f"try_element_at({value}, {index + 1 if index >= 0 else index})"

    def list_len(self, value: str) -> str:
        return f"CASE WHEN {value} IS NULL THEN 0 ELSE size({value}) END"

    def map_len(self, value: str) -> str:
        return self.list_len(value)

    def str_len(self, value: str) -> str:
        return f"coalesce(char_length({value}), 0)"

    def non_ascii(self, value: str) -> str:
        return f"octet_length({value}) <> char_length({value})"

    def exists(self, value: str, var: str, predicate: str) -> str:
        return f"coalesce(exists({value}, {var} -> {predicate}), FALSE)"

    def filter(self, value: str, var: str, predicate: str) -> str:
        return f"filter({value}, {var} -> {predicate})"

    def some_item(self, value: str, var: str, null: bool) -> str:
        return self.exists(value, var, f"{var} IS {'' if null else 'NOT '}NULL")

    def concat(self, left: str, right: str) -> str:
        return (f"CASE WHEN {left} IS NULL THEN {right} WHEN {right} IS NULL THEN {left} "
                f"ELSE concat({left}, {right}) END")

    def distinct_len(self, value: str, var: str) -> str:
        # array_distinct keeps one null, as a Python set does
        return self.list_len(f"array_distinct({value})")

    def list_extreme(self, value: str, name: str) -> str:
        return f"array_{name}({value})"

    def starts(self, value: str, prefix: str) -> str:
        return f"startswith({value}, {prefix})"

    def ends(self, value: str, suffix: str) -> str:
        return f"endswith({value}, {suffix})"

    def search(self, value: str, pattern: str) -> str:
        return f"({value} RLIKE {self.string(pattern)})"

    def raise_error(self, message: str) -> str:
        return f"raise_error({self.string(message)})"

    def nonfinite(self, value: str) -> str:
        return (f"(isnan({value}) OR {value} IN (CAST('Infinity' AS DOUBLE), "
                f"CAST('-Infinity' AS DOUBLE)))")

    def to_text(self, value: str) -> str:
        return f"CAST({value} AS STRING)"


DUCKDB = Dialect()
SPARK = SparkDialect()
