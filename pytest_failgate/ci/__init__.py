"""The gate and the guard as one CI step: ``python -m pytest_failgate.ci``.

``run`` is what any CI system needs: ``failgate check`` and ``failgate guard`` run
together, their exit codes mapped through one table to one verdict and one exit code,
one Markdown report of both, and a JSON file of the verdict and the failed items.
``github`` adds what a GitHub Actions runner reads (the job summary, annotations,
step outputs) and ``comment`` the one pull-request comment kept up to date; the
repository's ``action.yml`` is a thin shell around ``python -m pytest_failgate.ci
--github``.
"""
