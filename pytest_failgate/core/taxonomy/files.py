r"""Taxonomy files: a taxonomy written in YAML, reviewed in a diff, compiled once.

```yaml
name: rag
description: the RAG failure classifier, v1
id_fields: [id, case_id]            # or id_field: id; [[provider.id, testIdx]]: composite
records: results.results            # for a JSON file: where its list of cases is
report_name: '(?P<name>.+)_\d{8}'   # the report's name: this group of the file's stem
required: [accuracy]                # a case without one of these is an error, not a failure
defaults: {answerable: true}        # what an absent field reads as
types: {answerable: bool, accuracy: number | null, expected_doc_ids: list[string] | null}
failed: "(accuracy != 1.0) if answerable else not (abstained and not evidence_doc_ids)"
categories:                         # tried in order; the first whose `when` holds wins
  - {name: retrieval_miss, when: "...", group: retrieval, stage: retrieve, hint: "..."}
  - {name: unknown}                 # the fallback: last, and without `when`
metrics:                            # per case, paired with a baseline (null: not applicable)
  - {name: accuracy, value: "correct if answerable else null", better: higher}
caveats:                            # informational flags, counted, never failures
  - {name: retries_used, when: "retry_count > 0"}
```

Every problem (bad YAML, an unknown key, a rule outside the expression language,
a fallback that is not last, a name used twice) is one message with the file,
line and column, and for an expression a caret under the offending part.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.confine import check_inside
from ..base.errors import FailgateError, closest, did_you_mean, display_path
from ..base.yamlsource import YamlDoc, load_yaml, read_text
from .expr import ExprError, compile_expr
from .expr.regex import UnsupportedPattern, group_matcher
from .model import (
    BUILTIN_DIR,
    COMPOSITE,
    GROUP_PREFIX,
    RESERVED_NAMES,
    CaseMetric,
    Field,
    Kind,
    Rule,
    Taxonomy,
    never,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from ..base.yamlsource import Loc

TOP_KEYS = ("name", "description", "id_field", "id_fields", "defaults", "types", "failed",
            "categories", "caveats", "substantive", "required", "metrics",
            "records", "report_name", "extends")
CATEGORY_KEYS = ("name", "when", "description", "group", "stage", "hint", "enabled",
                 "settings", "outside", "split_by")
# what a taxonomy that extends a built-in one may write: its name and the categories it adds
EXTENDS_KEYS = ("name", "description", "extends", "categories")
METRIC_KEYS = ("name", "value", "better", "description", "settings")
CAVEAT_KEYS = ("name", "when", "description")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_TYPE_WORDS: dict[str, Kind] = {
    "bool": "bool", "boolean": "bool", "number": "number", "string": "string",
    "null": "null", "object": "object", "list": "array", "array": "array",
}


def load_taxonomy_file(path: Path) -> Taxonomy:
    """Read and compile a taxonomy file: its text, built by :func:`taxonomy_from_yaml`."""
    return taxonomy_from_yaml(read_text(path), path)


def taxonomy_from_yaml(text: str, source: str | Path = "<taxonomy>") -> Taxonomy:
    """A taxonomy written in the taxonomy file format (YAML), compiled.

    The one builder of a taxonomy written as a whole: ``pytest_failgate.api`` exports it
    (a plugin's taxonomies), and the built-in taxonomies and the taxonomy files a ceilings
    file or a command line names are built with it. An error (bad YAML, an unknown key, a
    rule outside the expression language) is a ``FailgateError`` naming ``source`` and
    the line and column; a ``source`` given as a ``Path`` (the file the text was read from)
    is also the taxonomy's ``source``.
    """
    where = source if isinstance(source, Path) else None
    return taxonomy_from(load_yaml(Path(source), text), (), source=where)


def taxonomy(name: str, *, failed: str, categories: Sequence[str | Mapping[str, Any]],
             description: str = "", defaults: Mapping[str, Any] | None = None,
             types: Mapping[str, str] | None = None, required: Iterable[str] = (),
             id_fields: Sequence[str] | None = None,
             metrics: Sequence[Mapping[str, Any]] = (),
             caveats: Sequence[Mapping[str, Any]] = (),
             substantive: str | None = None) -> Taxonomy:
    """A taxonomy from keyword arguments: the keys of a taxonomy file.

    ``failed`` and each category's ``when`` are expressions of the rule language;
    ``categories`` are tried in order, the last (a bare name, or one without ``when``)
    is the fallback. ``types`` maps a field to its kinds (``"number | null"``). Written
    as the file it stands for and built by :func:`taxonomy_from_yaml`, so both ways of
    writing a taxonomy compile, and fail, alike.
    """
    import yaml

    document: dict[str, Any] = {"name": name, "failed": failed,
                                "categories": [{"name": c} if isinstance(c, str) else dict(c)
                                               for c in categories]}
    if description:
        document["description"] = description
    optional: dict[str, Any] = {
        "defaults": dict(defaults or {}), "types": dict(types or {}),
        "required": list(required), "id_fields": list(id_fields or []),
        "metrics": [dict(m) for m in metrics], "caveats": [dict(c) for c in caveats],
        "substantive": substantive}
    document |= {key: value for key, value in optional.items() if value}
    return taxonomy_from_yaml(yaml.safe_dump(document, sort_keys=False, allow_unicode=True),
                              f"<taxonomy {name}>")


def taxonomy_from(doc: YamlDoc, loc: Loc, source: Path | None = None) -> Taxonomy:
    """Compile the taxonomy written at ``loc`` of a YAML document (a file, or inline)."""
    return _Builder(doc, loc).build(source)


class _Builder:
    def __init__(self, doc: YamlDoc, loc: Loc) -> None:
        self.doc = doc
        self.loc = loc
        self.data = doc.data_at(loc)
        self.defaults: dict[str, Any] = {}

    def error(self, message: str, loc: Loc, *, at_key: bool = False) -> FailgateError:
        return self.doc.error(message, (*self.loc, *loc), at_key=at_key)

    def build(self, source: Path | None) -> Taxonomy:
        data = self.mapping(self.data, (), TOP_KEYS, "a taxonomy")
        if "extends" in data:
            return self.extended(data, source)
        for key in ("name", "failed", "categories"):
            if key not in data:
                raise self.error(f"a taxonomy needs '{key}'", ())
        name = self.name(data["name"], ("name",))
        self.defaults = self.mapping(data.get("defaults", {}), ("defaults",), None, "defaults")
        types = self.mapping(data.get("types", {}), ("types",), None, "types")
        fields = [self.field(field, spec) for field, spec in types.items()]
        fields += [Field(f, default=v) for f, v in self.defaults.items() if f not in types]
        failed = self.rule("failed", data["failed"], ("failed",), "when a case failed")
        categories, fallback = self.categories(data["categories"])
        caveats = [self.caveat(entry, ("caveats", i))
                   for i, entry in enumerate(self.sequence(data.get("caveats", []), ("caveats",)))]
        id_fields = self.id_fields(data)
        substantive = (self.rule("substantive", data["substantive"], ("substantive",))
                       if "substantive" in data else None)
        metrics = [self.metric(entry, ("metrics", i))
                   for i, entry in enumerate(self.sequence(data.get("metrics", []), ("metrics",)))]
        try:
            return Taxonomy(
                name=name,
                description=self.text(data.get("description", ""), ("description",)),
                fields=tuple(fields),
                failed=failed,
                categories=tuple(categories),
                fallback=fallback["name"],
                fallback_description=fallback["description"],
                fallback_group=fallback["group"],
                caveats=tuple(caveats),
                id_fields=id_fields,
                source=source,
                substantive=substantive,
                required=self.required(data),
                metrics=tuple(metrics),
                records=self.records(data),
                report_name=self.report_name(data),
            )
        except ValueError as exc:
            raise self.error(str(exc).split(": ", 1)[-1], ()) from None

    def extended(self, data: dict[str, Any], source: Path | None) -> Taxonomy:
        """A built-in taxonomy with categories of its own tried first (``extends``): what
        ``init`` writes to give each of a project's own metrics a category, by its name."""
        from dataclasses import replace

        from ..base.yamlsource import read_text

        self.mapping(data, (), EXTENDS_KEYS, "a taxonomy that extends another")
        for key in ("name", "categories"):
            if key not in data:
                raise self.error(f"a taxonomy needs '{key}'", ())
        known = {path.stem: path for path in sorted(BUILTIN_DIR.glob("*.yaml"))}
        base_name = data["extends"]
        if not isinstance(base_name, str) or base_name not in known:
            raise self.error("extends names a built-in taxonomy ("
                             + ", ".join(sorted(known)) + ")", ("extends",))
        base = taxonomy_from_yaml(read_text(known[base_name]), known[base_name])
        entries = self.sequence(data["categories"], ("categories",))
        for index, entry in enumerate(entries):
            if not isinstance(entry, dict) or "when" not in entry:
                raise self.error("a category added to a taxonomy it extends needs a 'when' "
                                 f"(the fallback stays {base_name}'s)", ("categories", index))
        rules, _ = self.categories([*entries, {"name": base.fallback}])
        for index, rule in enumerate(rules):
            if rule.name in base.category_names:
                raise self.error(f"'{rule.name}' is a category of {base_name} already",
                                 ("categories", index, "name"))
        try:
            return replace(base, name=self.name(data["name"], ("name",)),
                           description=self.text(data.get("description", base.description),
                                                 ("description",)),
                           categories=(*rules, *base.categories), source=source)
        except ValueError as exc:
            raise self.error(str(exc).split(": ", 1)[-1], ()) from None

    # -- pieces --------------------------------------------------------------------

    def mapping(self, value: Any, loc: Loc, keys: tuple[str, ...] | None,
                what: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(f"{what} must be a mapping", loc)
        if keys is not None:
            for key in value:
                if key not in keys:
                    raise self.error(f"unknown key '{key}'" + did_you_mean(key, keys),
                                     (*loc, key), at_key=True)
        return value

    def sequence(self, value: Any, loc: Loc) -> list[Any]:
        if not isinstance(value, list):
            raise self.error("expected a list", loc)
        return value

    def text(self, value: Any, loc: Loc) -> str:
        if not isinstance(value, str):
            raise self.error("expected text", loc)
        return value

    def name(self, value: Any, loc: Loc) -> str:
        text = self.text(value, loc) if isinstance(value, str) else None
        if text is None or not _NAME.fullmatch(text):
            raise self.error("a name is letters, digits, '_', '.' and '-', not starting with "
                             "a digit", loc)
        if text in RESERVED_NAMES or text.startswith(GROUP_PREFIX):
            raise self.error(f"'{text}' is reserved ({', '.join(sorted(RESERVED_NAMES))})", loc)
        return text

    def expression(self, value: Any, loc: Loc) -> Any:
        if isinstance(value, bool):
            value = "true" if value else "false"
        if not isinstance(value, str):
            raise self.error("a rule is an expression written as text", loc)
        try:
            return compile_expr(value, self.defaults)
        except ExprError as exc:
            raise self.expression_error(value, exc, loc) from None

    def expression_error(self, text: str, exc: ExprError, loc: Loc) -> FailgateError:
        span = self.doc.where((*self.loc, *loc))
        message = f"{exc.message}\n{exc.caret(text)}"
        if span is None:
            return FailgateError(message, self.doc.path)
        if span.style in (None, "'", '"') and "\n" not in text and exc.line == 1:
            column = span.col + (exc.col - 1) + (0 if span.style is None else 1)
            return FailgateError(message, self.doc.path, span.line, column)
        return FailgateError(message, self.doc.path, span.line, span.col)

    def rule(self, name: str, value: Any, loc: Loc, description: str | None = None,
             **extra: Any) -> Rule:
        compiled = self.expression(value, loc)
        return Rule(name, compiled.holds, compiled.reads,
                    description or compiled.text.strip(), text=compiled.text,
                    paths=compiled.paths, **extra)

    def categories(self, value: Any) -> tuple[list[Rule], dict[str, Any]]:
        entries = self.sequence(value, ("categories",))
        if not entries:
            raise self.error("a taxonomy needs at least its fallback category", ("categories",))
        rules: list[Rule] = []
        for index, entry in enumerate(entries):
            loc = ("categories", index)
            data = self.mapping(entry, loc, CATEGORY_KEYS, "a category")
            if "name" not in data:
                raise self.error("a category needs a 'name'", loc)
            name = self.name(data["name"], (*loc, "name"))
            last = index == len(entries) - 1
            if "when" not in data and not last:
                raise self.error(
                    f"category '{name}' has no 'when', so it is a fallback, and the fallback "
                    "must be the last category (no rule after it could ever match)", loc)
            description = data.get("description")
            if description is not None:
                description = self.text(description, (*loc, "description"))
            group = self.optional_name(data, "group", loc)
            if last and "when" not in data:
                return rules, {"name": name, "group": group,
                               "description": description or "failed, and no rule matched"}
            enabled = data.get("enabled", True)
            if not isinstance(enabled, bool):
                raise self.error("enabled is true or false", (*loc, "enabled"))
            outside = data.get("outside", False)
            if not isinstance(outside, bool):
                raise self.error("outside is true or false (the case failed outside the system "
                                 "under test: a provider, quota or judge error)", (*loc, "outside"))
            rule = self.rule(name, data["when"], (*loc, "when"), description, group=group,
                             stage=self.optional_text(data, "stage", loc),
                             hint=self.optional_text(data, "hint", loc), enabled=enabled,
                             settings=self.names(data, "settings", loc), outside=outside,
                             split_by=self.optional_name(data, "split_by", loc))
            if not enabled:
                rule = Rule(rule.name, never(), rule.reads, rule.description, False,
                            rule.group, rule.stage, rule.hint, rule.settings, rule.text,
                            rule.paths, outside)
            rules.append(rule)
        raise self.error("the last category is the fallback and has no 'when': add one such as "
                         "{name: unknown}", ("categories", len(entries) - 1))

    def caveat(self, entry: Any, loc: Loc) -> Rule:
        data = self.mapping(entry, loc, CAVEAT_KEYS, "a caveat")
        for key in ("name", "when"):
            if key not in data:
                raise self.error(f"a caveat needs '{key}'", loc)
        name = self.name(data["name"], (*loc, "name"))
        description = self.optional_text(data, "description", loc)
        return self.rule(name, data["when"], (*loc, "when"), description)

    def metric(self, entry: Any, loc: Loc) -> CaseMetric:
        data = self.mapping(entry, loc, METRIC_KEYS, "a metric")
        for key in ("name", "value"):
            if key not in data:
                raise self.error(f"a metric needs '{key}'", loc)
        better = data.get("better", "higher")
        if better not in ("higher", "lower"):
            raise self.error("better is 'higher' or 'lower'", (*loc, "better"))
        compiled = self.expression(data["value"], (*loc, "value"))
        return CaseMetric(self.name(data["name"], (*loc, "name")), compiled.function,
                          compiled.reads, better,
                          self.optional_text(data, "description", loc) or compiled.text.strip(),
                          self.names(data, "settings", loc), compiled.text)

    def names(self, data: dict[str, Any], key: str, loc: Loc) -> tuple[str, ...]:
        """A list of configuration keys (``settings``), each non-empty text."""
        if key not in data:
            return ()
        items = self.sequence(data[key], (*loc, key))
        texts = tuple(self.text(item, (*loc, key, i)) for i, item in enumerate(items))
        if any(not text for text in texts):
            raise self.error("a setting is a configuration key such as top_k", (*loc, key))
        return texts

    def optional_text(self, data: dict[str, Any], key: str, loc: Loc) -> str | None:
        return self.text(data[key], (*loc, key)) if key in data else None

    def optional_name(self, data: dict[str, Any], key: str, loc: Loc) -> str | None:
        return self.name(data[key], (*loc, key)) if key in data else None

    def id_fields(self, data: dict[str, Any]) -> tuple[str, ...]:
        if "id_field" in data and "id_fields" in data:
            raise self.error("give id_field or id_fields, not both", ("id_fields",), at_key=True)
        if "id_field" in data:
            return (self.text(data["id_field"], ("id_field",)),)
        if "id_fields" in data:
            names = self.sequence(data["id_fields"], ("id_fields",))
            return tuple(self.id_entry(n, ("id_fields", i)) for i, n in enumerate(names))
        from .model import DEFAULT_ID_FIELDS

        return DEFAULT_ID_FIELDS

    def records(self, data: dict[str, Any]) -> tuple[str, ...]:
        if "records" not in data:
            return ()
        path = self.text(data["records"], ("records",))
        keys = tuple(path.split("."))
        if not all(keys):
            raise self.error("records is a path of keys from the top of the file, such as "
                             "results.results", ("records",))
        return keys

    def report_name(self, data: dict[str, Any]) -> str | None:
        if "report_name" not in data:
            return None
        pattern = self.text(data["report_name"], ("report_name",))
        try:  # matched by the rule language's linear-time automaton, never by re
            group_matcher(pattern)
        except re.error as exc:
            raise self.error(f"invalid regular expression: {exc}", ("report_name",)) from None
        except UnsupportedPattern as exc:
            if str(exc) == "the pattern has no group":
                raise self.error("report_name needs a group that is the name, such as "
                                 "'(?P<name>.+)_\\d{8}T\\d{6}'", ("report_name",)) from None
            raise self.error(f"report_name: {exc}", ("report_name",)) from None
        return pattern

    def required(self, data: dict[str, Any]) -> tuple[str, ...]:
        names = self.sequence(data.get("required", []), ("required",))
        paths = tuple(self.text(n, ("required", i)) for i, n in enumerate(names))
        for index, path in enumerate(paths):
            if not all(_NAME.fullmatch(part) for part in path.split(".")):
                raise self.error("a required field is a field path such as success or "
                                 "response.output", ("required", index))
        return paths

    def id_entry(self, value: Any, loc: Loc) -> str:
        """An id field path, or a list of them: a composite id (``[provider.id, testIdx]``)."""
        if isinstance(value, list):
            if len(value) < 2:
                raise self.error("a composite id lists two or more field paths", loc)
            parts = [self.text(part, (*loc, i)) for i, part in enumerate(value)]
            if any(COMPOSITE in part for part in parts):
                raise self.error(f"'{COMPOSITE}' cannot be part of a field path", loc)
            return COMPOSITE.join(parts)
        return self.text(value, loc)

    def field(self, name: str, spec: Any) -> Field:
        loc = ("types", name)
        text = self.text(spec, loc)
        kinds: set[Kind] = set()
        items: set[Kind] | None = None
        for part in (p.strip() for p in _split_union(text)):
            match = re.fullmatch(r"(list|array)\[(.+)\]", part)
            if match:
                kinds.add("array")
                items = {self.kind(p.strip(), loc) for p in _split_union(match.group(2))}
            else:
                kinds.add(self.kind(part, loc))
        default = self.defaults.get(name)
        field = Field(name, frozenset(kinds), default,
                      frozenset(items) if items is not None else None)
        if name in self.defaults and field.problem(default) is not None:
            raise self.error(f"the default {field.problem(default)}", ("defaults", name))
        return field

    def kind(self, word: str, loc: Loc) -> Kind:
        if word not in _TYPE_WORDS:
            raise self.error(f"unknown type '{word}'" + did_you_mean(word, _TYPE_WORDS), loc)
        return _TYPE_WORDS[word]


def _split_union(text: str) -> list[str]:
    """Split ``a | list[b | c] | null`` at the top-level bars."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += (char == "[") - (char == "]")
        if char == "|" and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def names_a_file(value: str) -> bool:
    """Whether a taxonomy is named by its file rather than by its name: a YAML suffix or a
    folder in it. The one rule of ceilings files, the command line and the guard; a known
    name is looked up first everywhere."""
    return value.endswith((".yaml", ".yml")) or "/" in value or "\\" in value


def taxonomy_by_name_or_path(value: str, taxonomies: Mapping[str, Taxonomy]) -> Taxonomy:
    """A taxonomy given on a command line: a known name, else a file (relative to the cwd)."""
    if value in taxonomies:
        return taxonomies[value]
    if names_a_file(value):
        path = Path(value)
        check_inside(path)  # a confined run answers "outside" before it looks
        if not path.is_file():
            raise FailgateError(f"taxonomy file '{display_path(path)}' not found (a path "
                                "given on the command line is relative to the working "
                                "directory; in the ini key, to the ini file)")
        return load_taxonomy_file(path.resolve())
    guess = closest(value, taxonomies)
    raise FailgateError(f"unknown taxonomy '{value}'"
                        + (f"; did you mean '{guess}'?" if guess is not None else "")
                        + f" (the taxonomies: {', '.join(sorted(taxonomies))}; or a path to "
                        "a taxonomy file)")


def resolve_taxonomy(value: Any, doc: YamlDoc, taxonomies: Mapping[str, Taxonomy],
                     loc: Loc = ("taxonomy",)) -> Taxonomy:
    """The taxonomy a ceilings file names: a built-in or contributed name, a file, or inline."""
    if isinstance(value, dict):
        return taxonomy_from(doc, loc)
    if not isinstance(value, str):
        raise doc.error("taxonomy is a name (such as 'rag'), a path to a taxonomy file, or a "
                        "taxonomy written inline", loc)
    if value in taxonomies:
        return taxonomies[value]
    if names_a_file(value):
        path = (doc.path.parent / value).resolve()
        check_inside(path)  # a confined run answers "outside" before it looks
        if not path.exists():
            raise doc.error(f"taxonomy file '{value}' not found (paths are relative to this "
                            "file)", loc)
        return load_taxonomy_file(path)
    raise doc.error(f"unknown taxonomy '{value}'" + did_you_mean(value, taxonomies), loc)
