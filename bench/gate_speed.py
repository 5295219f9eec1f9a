"""The gate's reading speed and memory, as ratios against ``json.load`` in the same run.

Reports are built the way evaluation runs write them, never by copying a few cases:
every case starts from one of the real BidMate cases in
examples/reports/eval_summary.json and gets its own id, latency, accuracy, doc ids,
query type and answer length; ``attempt_latency`` and ``claim_citation_alignment``
(metrics added later) are present in half the cases; Korean text is escaped as
``json.dump`` writes it by default. The shapes:

- ``real100k`` / ``real10k`` / ``real1k``: 100,000 / 10,000 / 1,000 such cases (5.5 KB
  each), and ``jsonl100k``: the 100,000 as JSON Lines.
- ``korean100k``: the same with the Korean written as it is (``ensure_ascii=False``).
- ``utf8100k`` / ``jsonlutf8100k``: raw UTF-8 text as many tools write it
  (``ensure_ascii=False``, no ``\\u`` escapes), as ``.json`` and as JSON Lines: the
  real-shaped cases with random ids, answers with emoji, and a nested ``retrieved_docs``
  list (doc ids, Korean titles and passages with emoji) in most cases: about 5.8 KB a
  case, a fifth of it multi-byte characters.
- ``ascii100k``: the same with every string English text of the same length.
- ``compact100k``: 100,000 short cases (about 730 B): English text, answers cut short.
- ``trailing``: 50,000 cases of 20 unique string fields with an optional trailing key on
  half of them (the shape that made the old layout-learning scanner backtrack).
- ``layouts``: 50,000 cases in 1,000 distinct layouts (key sets and key orders).

The commands, each in a fresh interpreter, in interleaved rounds after one warm-up:

- the floors, which decode the same file and free it: ``json.load`` (the reference; a
  streaming ``json.loads`` per line for JSON Lines), "by hand" (``json.load`` and the
  rag rules written in Python, what a user would write), "msgspec" (msgspec
  decoding a struct of only the fields the rules read: what the machine can do) and
  "pydantic-core" (pydantic-core validating the same fields: what the default install's
  decoder can do, the floor under "default");
- the gate under pytest (``pytest --failgate``, failgate as pytest's only plugin:
  ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 -p pytest_failgate.plugin``) and ``failgate
  check``, each with the default install ("default": msgspec made unimportable) and
  with the ``fast`` extra.

Two ratios per command: of CPU time (user + system of the child: what a busy machine
inflates least) and of wall time, each as median over median, with min over min
beside it. The gate's time includes starting pytest, loading the plugin and the
taxonomy; the floors' include starting Python.

    python bench/gate_speed.py                        # every shape, 3 rounds
    python bench/gate_speed.py --size 20000           # every shape at a fifth: minutes
    python bench/gate_speed.py --shapes real100k,jsonl100k --rounds 5
    python bench/gate_speed.py --memory               # peak memory: 1 GB .json, 1M-line JSONL
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "examples" / "reports" / "eval_summary.json"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # failgate's cost, not the test extra's plugins
WORDS = ["the", "answer", "cites", "tender", "documents", "for", "agency", "requirements",
         "security", "controls", "schedule", "deliverables"]
RULE_FREE = ("query_type", "expected_doc_ids", "evidence_doc_ids")


def english(value: Any, rng: random.Random) -> Any:
    """ASCII text of the same length (and shape) as ``value``."""
    if isinstance(value, str):
        text = " ".join(rng.choice(WORDS) for _ in range(len(value) // 5 + 1))
        return text[: len(value)]
    if isinstance(value, list):
        return [english(v, rng) for v in value]
    if isinstance(value, dict):
        return {k: english(v, rng) for k, v in value.items()}
    return value


def real_case(source: dict[str, Any], i: int, rng: random.Random) -> dict[str, Any]:
    """A real case with every field a rule reads varied, and the optional metrics in half."""
    case = dict(source)
    case["id"] = f"bidmate-{i:07d}-{rng.randrange(16**6):06x}"
    case["latency_ms"] = round(rng.uniform(1, 5000), 3)
    case["accuracy"] = rng.choice([1.0, 1.0, 0.0, round(rng.random(), 4)])
    case["answerable"] = rng.random() < 0.85
    case["abstained"] = rng.random() < 0.15
    case["term_match"] = rng.choice([True, False, None])
    case["expected_doc_ids"] = [f"rfp-{rng.randrange(10**5)}" for _ in range(rng.randrange(3))]
    case["evidence_doc_ids"] = [f"rfp-{rng.randrange(10**5)}" for _ in range(rng.randrange(4))]
    case["query_type"] = rng.choice(["single_doc", "comparison", "multi_hop", "follow_up"])
    answer = source["answer"]
    case["answer"] = answer[: rng.randrange(len(answer) // 2, len(answer) + 1)] + f" ({i})"
    if rng.random() < 0.5:
        attempts = rng.randrange(1, 4)
        case["attempt_latency"] = [round(rng.uniform(1, 900), 2) for _ in range(attempts)]
    if rng.random() < 0.5:
        case["claim_citation_alignment"] = round(rng.random(), 4)
    return case


EMOJI = ["\u2705", "\U0001f4c4", "\U0001f50d", "\u26a0\ufe0f", "\U0001f642", "\U0001f4cc",
         "\U0001f3e2"]


def utf8_case(source: dict[str, Any], i: int, rng: random.Random,
              passages: list[str]) -> dict[str, Any]:
    """A real-shaped case as raw UTF-8 data: a random id, an answer with emoji and, in
    nine cases of ten, the retrieved documents (nested doc ids, Korean passages)."""
    case = real_case(source, i, rng)
    case["id"] = f"{rng.getrandbits(64):016x}-{i}"
    case["answer"] = f"{case['answer']} {rng.choice(EMOJI)}{rng.choice(EMOJI)}"
    if rng.random() < 0.9:
        case["retrieved_docs"] = [
            {"doc_id": f"rfp-{rng.getrandbits(40):010x}", "rank": rank,
             "title": rng.choice(passages)[:30], "score": round(rng.random(), 6),
             "passages": [{"page": rng.randrange(1, 300),
                           "text": rng.choice(passages)[:rng.randrange(100, 320)]
                           + rng.choice(EMOJI)} for _ in range(rng.randrange(1, 4))]}
            for rank in range(rng.randrange(2, 5))]
    return case


def utf8_report(n: int, seed: int = 29) -> dict[str, Any]:
    """``n`` raw UTF-8 real-shaped cases (``utf8_case``) in an eval_summary document."""
    source = json.loads(SOURCE.read_text(encoding="utf-8"))
    rng = random.Random(seed)
    passages = [c["answer"].replace("\n", " ") for c in source["case_results"]]
    document = {k: v for k, v in source.items() if k != "case_results"}
    document["num_predictions"] = n
    document["case_results"] = [utf8_case(rng.choice(source["case_results"]), i, rng,
                                          passages) for i in range(n)]
    return document


def real_report(n: int, ascii_text: bool = False, seed: int = 2026,
                short: bool = False) -> dict[str, Any]:
    source = json.loads(SOURCE.read_text(encoding="utf-8"))
    rng = random.Random(seed)
    cases = source["case_results"]
    if ascii_text:
        cases = [{k: v if k in RULE_FREE else english(v, rng) for k, v in c.items()}
                 for c in cases]
    if short:  # the long texts cut: about 730 bytes a case
        cases = [{k: v[:40] if isinstance(v, str) else v for k, v in c.items()
                  if k not in ("format_checks", "claim_targets", "expected_claim_targets")}
                 for c in cases]
    out = [real_case(rng.choice(cases), i, rng) for i in range(n)]
    if short:
        for case in out:
            case["answer"] = case["answer"][:60]
    document = {k: v for k, v in source.items() if k != "case_results"}
    document["num_predictions"] = n
    document["case_results"] = out
    return document


def trailing_report(n: int, seed: int = 7) -> dict[str, Any]:
    """20 unique string fields per case, then an optional key on half the cases."""
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        case: dict[str, Any] = {"id": f"t{i}", "accuracy": rng.choice([1.0, 0.0])}
        for k in range(20):  # short labels to paragraph-long text, unique per case
            words = (rng.choice(WORDS) for _ in range(rng.randrange(2, 60)))
            case[f"s{k}"] = f"{i}-{k}: " + " ".join(words)
        if rng.random() < 0.5:
            case["claim_citation_alignment"] = round(rng.random(), 4)
        cases.append(case)
    return {"case_results": cases}


def layouts_report(n: int, seed: int = 11) -> dict[str, Any]:
    """1,000 distinct layouts: each its own extra keys and its own key order."""
    rng = random.Random(seed)
    layouts = []
    for k in range(1000):
        keys = ["id", "accuracy", "answerable", "abstained", "evidence_doc_ids",
                *(f"extra_{k}_{j}" for j in range(rng.randrange(1, 6)))]
        rng.shuffle(keys)
        layouts.append(keys)
    cases = []
    for i in range(n):
        values: dict[str, Any] = {
            "id": f"l{i}", "accuracy": rng.choice([1.0, 0.0, 0.5]),
            "answerable": rng.random() < 0.9, "abstained": rng.random() < 0.1,
            "evidence_doc_ids": [f"d{rng.randrange(999)}" for _ in range(rng.randrange(3))]}
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(50, 400)))
        cases.append({key: values.get(key, f"{i} {key}: {text}") for key in layouts[i % 1000]})
    return {"case_results": cases}


# name -> (build for n cases, description, suffix, json.dumps keyword arguments, n at full
# size); ``--size N`` scales every n by N / 100,000 (never below 1,000)
SHAPES: dict[str, tuple[Callable[[int], dict[str, Any]], str, str, dict[str, Any], int]] = {
    "real100k": (real_report, "real-shaped cases, Korean escaped", ".json", {"indent": 2},
                 100_000),
    "jsonl100k": (real_report, "the same real-shaped cases as JSON Lines", ".jsonl", {},
                  100_000),
    "real10k": (real_report, "real-shaped cases", ".json", {"indent": 2}, 10_000),
    "real1k": (real_report, "real-shaped cases", ".json", {"indent": 2}, 1_000),
    "korean100k": (real_report, "real-shaped cases, Korean as it is", ".json",
                   {"indent": 2, "ensure_ascii": False}, 100_000),
    "utf8100k": (utf8_report, "real-shaped cases, raw UTF-8 (Korean, emoji), nested docs",
                 ".json", {"indent": 2, "ensure_ascii": False}, 100_000),
    "jsonlutf8100k": (utf8_report, "the raw UTF-8 cases as JSON Lines", ".jsonl",
                      {"ensure_ascii": False}, 100_000),
    "ascii100k": (lambda n: real_report(n, ascii_text=True),
                  "real-shaped cases, English text", ".json", {"indent": 2}, 100_000),
    "compact100k": (lambda n: real_report(n, ascii_text=True, short=True),
                    "short cases, English text, compact", ".json", {}, 100_000),
    "trailing": (trailing_report, "cases of 20 unique string fields, optional trailing key",
                 ".json", {"indent": 2}, 50_000),
    "layouts": (layouts_report, "cases in 1,000 layouts", ".json", {"indent": 2}, 50_000),
}
BLOCK_FAST = "import sys; sys.modules['msgspec'] = None; "

# The floors: each reads the file given as its argument (``.json`` or JSON Lines).
JSON_LOAD = """import json, sys
path = sys.argv[1]
if path.endswith(".jsonl"):
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            json.loads(line)
else:
    with open(path, encoding="utf-8") as handle:
        json.load(handle)
"""
# What a user would write: json.load, then the rag taxonomy's rules by hand, first match wins.
BY_HAND = """import json, sys
from collections import Counter
path = sys.argv[1]
if path.endswith(".jsonl"):
    with open(path, encoding="utf-8") as lines:
        cases = [json.loads(line) for line in lines]
else:
    with open(path, encoding="utf-8") as handle:
        cases = json.load(handle)["case_results"]
counts = Counter()
for case in cases:
    answerable = case.get("answerable", True)
    abstained = case.get("abstained")
    if answerable:
        failed = case.get("accuracy") != 1.0
    else:
        failed = not (abstained and not case.get("evidence_doc_ids"))
    if not failed:
        continue
    expected = set(case.get("expected_doc_ids") or [])
    alignment = case.get("claim_citation_alignment")
    if not answerable and not abstained:
        counts["verifier_false_negative"] += 1
    elif answerable and abstained and case.get("term_match"):
        counts["verifier_false_positive"] += 1
    elif answerable and expected and not expected & set(case.get("evidence_doc_ids") or []):
        counts["retrieval_miss"] += 1
    elif (case.get("query_type") in ("comparison", "multi_hop")
          and len(case.get("attempt_latency") or []) <= 1):
        counts["planner_under_decomposition"] += 1
    elif isinstance(alignment, (int, float)) and not isinstance(alignment, bool) \
            and alignment < 0.5:
        counts["generator_hallucination"] += 1
    else:
        counts["unknown"] += 1
del cases
"""
# What the machine can do: msgspec decoding only the fields the rules read, into structs.
MSGSPEC = """import sys
from typing import Any
import msgspec
fields = ["id", "answerable", "abstained", "accuracy", "term_match", "expected_doc_ids",
          "evidence_doc_ids", "query_type", "attempt_latency", "claim_citation_alignment"]
Case = msgspec.defstruct("Case", [(f, Any, msgspec.UNSET) for f in fields], gc=False)
Top = msgspec.defstruct("Top", [("case_results", list[Case], msgspec.UNSET)])
path = sys.argv[1]
if path.endswith(".jsonl"):
    decode = msgspec.json.Decoder(Case).decode
    with open(path, "rb") as lines:
        for line in lines:
            decode(line)
else:
    with open(path, "rb") as handle:
        found = msgspec.json.Decoder(Top).decode(handle.read())
    del found
"""
# What the default install's decoder can do: pydantic-core validating only the rule fields.
PYDANTIC_CORE = """import sys
from pydantic_core import SchemaValidator, core_schema as cs
fields = ["id", "answerable", "abstained", "accuracy", "term_match", "expected_doc_ids",
          "evidence_doc_ids", "query_type", "attempt_latency", "claim_citation_alignment"]
case = cs.typed_dict_schema({f: cs.typed_dict_field(cs.any_schema(), required=False)
                             for f in fields}, extra_behavior="ignore")
path = sys.argv[1]
if path.endswith(".jsonl"):
    validate = SchemaValidator(case).validate_json
    with open(path, "rb") as lines:
        for line in lines:
            validate(line)
else:
    top = cs.typed_dict_schema({"case_results": cs.typed_dict_field(cs.list_schema(case))},
                               extra_behavior="ignore")
    with open(path, "rb") as handle:
        found = SchemaValidator(top).validate_json(handle.read())
    del found
"""


def gate_command(report: Path, default: bool, cli: bool) -> list[str]:
    """``pytest --failgate`` (failgate pytest's only plugin) or ``failgate check``."""
    block = BLOCK_FAST if default else ""
    if cli:
        run = "import sys; from pytest_failgate.cli import main; sys.exit(main(sys.argv[1:]))"
        return [sys.executable, "-c", block + run, "check", str(report)]
    run = "import sys, pytest; sys.exit(pytest.main(sys.argv[1:]))"
    return [sys.executable, "-c", block + run, "-q", "-p", "pytest_failgate.plugin", "-p",
            "no:cacheprovider", f"--failgate={report}", "ceilings.yaml"]


def pytest_command(report: Path, default: bool) -> list[str]:
    return gate_command(report, default, cli=False)


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run of ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False, env=ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stdout[-2000:]}"
                 f"\n{done.stderr[-2000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu, wall


COMMANDS = ("json.load", "by hand", "msgspec", "pydantic-core", "pytest default", "pytest fast",
            "cli default", "cli fast")


def commands_for(report: Path, names: list[str]) -> dict[str, list[str]]:
    floors = {"json.load": JSON_LOAD, "by hand": BY_HAND, "msgspec": MSGSPEC,
              "pydantic-core": PYDANTIC_CORE}
    found = {}
    for name in names:
        if name in floors:
            found[name] = [sys.executable, "-c", floors[name], str(report)]
        else:
            where, install = name.split()
            found[name] = gate_command(report, install == "default", where == "cli")
    return found


def measure(report: Path, work: Path, rounds: int, names: list[str]
            ) -> dict[str, list[tuple[float, float]]]:
    """Interleaved rounds after one warm-up of each command (fresh interpreters)."""
    commands = commands_for(report, names)
    for command in commands.values():
        timed(command, work)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, command in commands.items():
            samples[name].append(timed(command, work))
    return samples


def init_ceilings(report: Path, work: Path) -> None:
    (work / "ceilings.yaml").unlink(missing_ok=True)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "pytest_failgate.plugin", "-p",
                    "no:cacheprovider", f"--failgate={report}", "--failgate-init"], cwd=work,
                   capture_output=True, check=False, env=ENV)
    if not (work / "ceilings.yaml").exists():
        sys.exit("could not write the benchmark's ceilings file")


def write_report(path: Path, document: dict[str, Any], options: dict[str, Any]) -> None:
    if path.suffix == ".jsonl":
        with path.open("w", encoding="utf-8") as out:
            for case in document["case_results"]:
                out.write(json.dumps(case, **options) + "\n")
    else:
        path.write_text(json.dumps(document, **options), encoding="utf-8")


def speed(shapes: list[str], rounds: int, names: list[str], size: int) -> None:
    with tempfile.TemporaryDirectory(prefix="failgate-bench-") as tmp:
        work = Path(tmp)
        (work / "pytest.ini").write_text("[pytest]\n")
        load = os.getloadavg()
        print(f"load average {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f} on "
              f"{os.cpu_count()} CPUs; {rounds} rounds", flush=True)
        ratios: dict[str, dict[str, float]] = {}
        floors: dict[str, float] = {}
        for shape in shapes:
            build, label, suffix, options, full = SHAPES[shape]
            n = full if full <= 1_000 else max(1_000, full * size // 100_000)
            report = work / f"{shape}{suffix}"
            write_report(report, build(n), options)
            init_ceilings(report, work)
            samples = measure(report, work, rounds, names)
            floor = "streaming json.loads" if suffix == ".jsonl" else "json.load"
            print(f"{shape}: {n:,} {label}, {report.stat().st_size / 1e6:.0f} MB; ratios "
                  f"to {floor} (the floor: decodes the file and frees it)")
            floors[shape] = statistics.median(r[0] for r in samples["json.load"])
            ratios[shape] = {name: statistics.median(r[0] for r in runs) / floors[shape]
                             for name, runs in samples.items()}
            for name, runs in samples.items():
                line = f"  {name:15}"
                for what, index in (("cpu", 0), ("wall", 1)):
                    values = [run[index] for run in runs]
                    reference = [run[index] for run in samples["json.load"]]
                    ratio = statistics.median(values) / statistics.median(reference)
                    low = min(values) / min(reference)
                    line += (f"  {what} {statistics.median(values):6.2f} s ratio {ratio:4.2f} "
                             f"(min/min {low:4.2f})")
                print(line, flush=True)
            report.unlink()
        summary(ratios, floors)
        load = os.getloadavg()
        print(f"load average at the end {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f}")


_JSON_TARGETS = {"cli fast": 0.35, "pytest fast": 0.45, "cli default": 0.9,
                 "pytest default": 0.9}
_LINES_TARGETS = {"cli fast": 0.6, "pytest fast": 0.6, "cli default": 0.9,
                  "pytest default": 0.9}
TARGETS = {"real100k": _JSON_TARGETS, "utf8100k": _JSON_TARGETS,
           "jsonl100k": _LINES_TARGETS, "jsonlutf8100k": _LINES_TARGETS}
"""The issue's targets, as CPU ratios to the floor of the same run (``json.load``, or a
streaming ``json.loads`` for JSON Lines), for ASCII (escaped) and raw UTF-8 data alike."""


def summary(ratios: dict[str, dict[str, float]], floors: dict[str, float]) -> None:
    """Each target against this run's CPU ratio, with the floor it is a ratio of: the
    real-shaped ``.json`` (``[fast]`` 0.35x check, 0.45x pytest; default 0.9x), JSON
    Lines (default 0.9x, ``[fast]`` 0.6x), and no other shape above 1.5x the
    real-shaped figure."""
    print("targets (CPU ratio medians of this run; the issue sets them for 100,000 cases, "
          "where start-up weighs least):")
    for shape, targets in TARGETS.items():
        for name, target in targets.items():
            if shape in ratios and name in ratios[shape]:
                got = ratios[shape][name]
                floor = "streaming json.loads" if "jsonl" in shape else "json.load"
                print(f"  {shape:13} {name:15} {got:5.2f}x  target <= {target:.2f}x of "
                      f"{floor} {floors[shape]:.2f} s  {'met' if got <= target else 'NOT met'}")
    real = ratios.get("real100k")
    for shape, found in ratios.items():
        if real is None or shape in TARGETS or shape in ("real10k", "real1k"):
            continue
        for name, got in found.items():
            if name in real and name.split()[0] in ("cli", "pytest"):
                limit = 1.5 * real[name]
                print(f"  {shape:13} {name:15} {got:5.2f}x  target <= 1.5 x real100k = "
                      f"{limit:.2f}x (json.load {floors[shape]:.2f} s)  "
                      f"{'met' if got <= limit else 'NOT met'}")


def peak_rss_mb(command: list[str], cwd: Path) -> float:
    """Peak resident memory of a command, by GNU time (maximum resident set size)."""
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *command], cwd=cwd, capture_output=True,
                          text=True, check=False, env=ENV)
    if done.returncode not in (0, 1):
        sys.exit(f"failed: {' '.join(command)}\n{done.stderr[-2000:]}")
    return int(done.stderr.strip().splitlines()[-1]) / 1024


def memory() -> None:
    with tempfile.TemporaryDirectory(prefix="failgate-bench-") as tmp:
        work = Path(tmp)
        (work / "pytest.ini").write_text("[pytest]\n")
        big = work / "big.json"
        with big.open("w", encoding="utf-8") as out:  # about 1 GB, written case by case
            document = real_report(0)
            head = json.dumps({k: v for k, v in document.items() if k != "case_results"})
            out.write(head[:-1] + ', "case_results": [\n')
            source = json.loads(SOURCE.read_text(encoding="utf-8"))["case_results"]
            rng, n_cases = random.Random(5), 0
            while out.tell() < 1_000_000_000:
                case = real_case(rng.choice(source), n_cases, rng)
                out.write(("" if n_cases == 0 else ",\n") + json.dumps(case))
                n_cases += 1
            out.write("\n]}\n")
        lines = work / "big.jsonl"
        with lines.open("w", encoding="utf-8") as out:  # 1,000,000 lines, short answers
            rng = random.Random(6)
            for i in range(1_000_000):
                case = real_case(rng.choice(source), i, rng)
                case["answer"] = case["answer"][:60]
                case["resolved_query"] = case["query"] = case["query"][:40]
                out.write(json.dumps(case) + "\n")
        for report, label in ((big, f"{n_cases:,} cases"), (lines, "1,000,000 lines")):
            init_ceilings(report, work)
            size = report.stat().st_size / 1e6
            print(f"{report.name}: {label}, {size:.0f} MB")
            for name, command in commands_for(report, ["json.load", "msgspec"]).items():
                print(f"  {name:15} peak {peak_rss_mb(command, work):7.0f} MB")
            for name, default in (("default", True), ("fast", False)):
                peak = peak_rss_mb(pytest_command(report, default), work)
                print(f"  {name:15} peak {peak:7.0f} MB")
            report.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--shapes", default=",".join(SHAPES),
                        help="comma-separated: " + ", ".join(SHAPES))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--size", type=int, default=100_000,
                        help="cases in the 100k shapes (the others scale alike); 20000 runs "
                             "in a few minutes")
    parser.add_argument("--commands", default=",".join(COMMANDS),
                        help="comma-separated: " + ", ".join(COMMANDS) + " (json.load always)")
    parser.add_argument("--memory", action="store_true",
                        help="measure peak memory on a 1 GB .json and a 1M-line JSONL instead")
    args = parser.parse_args()
    if args.memory:
        memory()
    else:
        names = ["json.load", *(c for c in args.commands.split(",") if c and c != "json.load")]
        speed([s for s in args.shapes.split(",") if s], args.rounds, names, args.size)


if __name__ == "__main__":
    main()
