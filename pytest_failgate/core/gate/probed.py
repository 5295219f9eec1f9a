"""A run's reports by name and format, learnt without reading their cases: what the guard
is told of a run (``failgate guard --base REF reports``).

The guard needs each report's name (an override naming none of the run's reports no
longer applies) and format (a plugin reader that takes a built-in format's files), not
its counts. Reading and classifying every report to learn them took 0.95 s and 171 MB
beside one 100 MB report; here each file is found as ``load_run`` finds it
(``runner.run_files``) and known by its head (``read.probe_report``): the readers' byte
probe and ``claims``, failgate's own shapes by their first bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..base.errors import FailgateError
from ..engines.load import runs_in_engine
from ..reports.builtin import builtin_readers
from ..reports.model import OWN_FORMAT, SkippedFile
from ..reports.read import ReadSpec, probe_report
from .found import no_report, run_files

if TYPE_CHECKING:
    from pathlib import Path

    from ..reports.choice import TaxonomyChoice
    from .runner import RunReport


def probe_run(paths: tuple[Path, ...], choice: TaxonomyChoice, spec: ReadSpec | None = None,
              engine: str = "python") -> list[RunReport]:
    """Each report of the run's ``paths``: its name, format and file (``guard_inputs``).

    As ``load_run``: a path given that is no report is an error, a file under a folder that
    is none is left out, a file that cannot be read is a report under its file's name (no
    format), and a run with no report is an error. A table a SQL engine reads is failgate's
    own shape under its file's name."""
    spec = spec if spec is not None else ReadSpec(readers=builtin_readers())
    files, skipped = run_files(paths, spec)
    found: list[RunReport] = []
    for file in files:
        if runs_in_engine(file.path, engine):
            found.append((file.name, OWN_FORMAT, file.path))
            continue
        try:
            probed = probe_report(file, choice, spec)
        except FailgateError:
            found.append((file.name, None, file.path))
            continue
        if isinstance(probed, SkippedFile):
            if file.path in paths:
                raise FailgateError(f"not a report: {probed.reason}", file.path)
            skipped.append(probed)
            continue
        found.append((*probed, file.path))
    if not found:
        raise no_report(paths, skipped, spec.readers)
    return found
