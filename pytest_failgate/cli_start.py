"""The CLI's commands of a project's start: ``init`` (a new ceilings file, or an existing
one written again with ``--force``) and ``noise`` (a noise band from repeated runs).

Kept apart from ``cli`` (the parser, the other commands, the printing): each returns its
lines and its verdict (``pass``, ``fail``, ``error``), which ``cli`` prints and turns into
the exit code.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .core.base.errors import FailgateError, display_path

if TYPE_CHECKING:
    import argparse

    from .commands.config import Config
    from .core.base.verdict import RunVerdict


def init_lines(args: argparse.Namespace, config: Config) -> tuple[list[str], RunVerdict]:
    from .commands.app import Failgate
    from .commands.gating import init, next_steps
    from .core.ceilings import writeback
    from .output.text import summary_lines

    out: list[str] = []
    if args.reason is not None and not args.force:
        raise FailgateError("--reason is written by init --force over an existing file; a new "
                            "file raises nothing")
    app = Failgate(config)
    try:
        done = init(app, force=args.force, reason=args.reason)
    except FailgateError as exc:  # an existing file: the way to write it again
        if args.force or exc.path != config.ceilings:
            raise
        raise FailgateError(f"{exc.message}; write it again from this run's counts with "
                            f"{_forced(config)}", exc.path) from None
    for line in summary_lines(done.result, writeback.outcomes_from_verdicts(done.result)):
        out.append(line)
    notes = next_steps(app, done.result) if done.written else []
    for line in ["", *done.lines, *notes]:
        out.append(line)
    if not done.written and done.result.verdict == "pass":  # nothing to write, or refused
        return out, "error"
    return out, done.result.verdict


def _forced(config: Config) -> str:
    """``failgate init`` as it was run, with ``--force``."""
    words = ["failgate", "init"]
    for option, given in config.given_words("init"):
        words += given if option.positional else [
            part for word in given for part in (option.cli_flag, word)] or [option.cli_flag]
    return "`" + " ".join([*words, "--force"]) + "`"


def noise_lines(args: argparse.Namespace, config: Config) -> tuple[list[str], RunVerdict]:
    from .core.reports.sink import UnfitTaxonomy

    try:
        return _noise(args, config)
    except UnfitTaxonomy as exc:  # own fields: the option that gives their taxonomy
        raise FailgateError(f"{exc.message} with {_noise_taxonomy(args)}", exc.path,
                            exc.line, exc.col) from None


def _noise_taxonomy(args: argparse.Namespace) -> str:
    """``failgate noise`` as it was run, with ``--taxonomy`` naming a taxonomy file."""
    import shlex

    from .core.base.advice import TAXONOMY_FILE

    words = ["failgate", "noise", *(["--check", args.check] if args.check else []), *args.runs]
    if args.out != "noise_band.json" and not args.check:
        words += ["--out", args.out]
    if args.ceilings:
        words += ["--ceilings", args.ceilings]
    return "`" + " ".join(shlex.quote(word) for word in [*words, "--taxonomy", TAXONOMY_FILE]
                          ) + "`"


def _noise(args: argparse.Namespace, config: Config) -> tuple[list[str], RunVerdict]:
    from .commands.runs import noise, remeasure
    from .core.base.formatting import plural

    out: list[str] = []
    if args.check:
        recorded = Path(os.path.realpath(args.check))
        runs, differ = remeasure(config, recorded, [Path(os.path.realpath(r)) for r in args.runs])
        shown = " ".join(display_path(run) for run in runs)
        if not differ:
            out.append(f"noise: {args.check} is what {shown} measure")
            return out, "pass"
        counted = plural(len(differ), "difference")
        out.append(f"noise: {args.check} is not what {shown} measure ({counted}):")
        for line in differ:
            out.append(f"  {line}")
        return out, "fail"
    measured = noise(config, [Path(os.path.realpath(run)) for run in args.runs], Path(args.out))
    out.append(f"noise over {measured.n_runs} runs -> {args.out}")
    width = max(len(name) for name in [*measured.bands, *measured.metric_bands])
    for name, band in measured.bands.items():
        out.append(f"  mode:{name:<{width}}  min {band.min:>7}  max {band.max:>7}  "
                   f"std {band.std:>8.3f}")
    for name, metric in measured.metric_bands.items():
        out.append(f"  {name:<{width + 5}}  min {float(metric.min):>7.4g}  "
                   f"max {float(metric.max):>7.4g}  std {metric.std:>8.3f}")
    unstable = measured.unstable_cases
    if unstable:
        out.append(f"  unstable cases: {len(unstable)} ({', '.join(unstable[:10])}"
                   + (", ...)" if len(unstable) > 10 else ")"))
    for warning in measured.warnings:
        out.append(f"warning: {warning}")
    return out, "pass"
