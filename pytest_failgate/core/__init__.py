"""The gate itself, with no knowledge of pytest or of how a result is shown.

Its packages, lowest first; each imports only those before it (tests/package/test_layering.py):

- ``base``: errors, safe file and YAML access, the ini file, wording helpers, the verdict
  vocabulary and the serialisable ``GateResult`` every front end and output reads;
- ``stats``: exact statistics (binomial tails, Holm, intervals, noise allowances);
- ``taxonomy``: the rule language and the classifier (first match wins);
- ``reports``: reading report files of every format into classified cases;
- ``ceilings``: the ceilings file read, checked and rewritten (the ratchet);
- ``compare``: a run against a baseline, a noise band, repeats, instruments;
- ``engines``: the same counts in SQL (DuckDB, Spark);
- ``guard``: what a change lets the gate pass that it did not before;
- ``gate``: one gate run, start to finish (``runner.run_gate``), and its result.

Nothing here imports pytest or ``pytest_failgate.output``.
"""
