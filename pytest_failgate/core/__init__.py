"""The gate itself, with no knowledge of pytest or of how a result is shown.

Taxonomies classify cases (``taxonomy/``), readers load reports (``reports/``),
ceilings are read, checked and rewritten (``ceilings/``), runs are compared
(``compare/``); ``gate.run_gate`` ties them together and ``rows.build_result`` turns
the run into the serialisable ``result.GateResult`` every adapter and output reads.
Nothing here imports pytest or ``pytest_failgate.output`` (tests/test_layering.py).
"""
