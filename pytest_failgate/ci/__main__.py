"""``python -m pytest_failgate.ci``: the gate and the guard as one CI step.

With ``--github`` (what ``action.yml`` runs) the settings are the Action's inputs
(``INPUT_*``), and the step also writes the job summary, the annotations, the step
outputs and, given a token on a pull request, the one comment. Otherwise they are the
command line (``--help``), for any CI system. The exit code is the run's verdict's:
0 pass, 1 fail, 2 error, 3 inconclusive.

The failgate that decides must be the installed one, never a ``pytest_failgate/`` folder
of the checkout it judges (a pull request could add one that says "pass"). ``python -m``
puts the working directory first on ``sys.path``, so ``action.yml`` runs ``python -I``
(isolated: no working directory, no ``PYTHONPATH``), and the other CIs' commands in the
docs do the same; and this module refuses to run from a package folder of the checkout
(``GITHUB_WORKSPACE``, else the working directory): one git tracks, or one importable only
because its folder is on the path. An installed failgate runs wherever its environment is
(a ``.venv`` inside the project included), and so does an editable install of failgate's
own repository (``core.base.install.checkout_copy``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.base.errors import FailgateError
from ..core.base.formatting import one_line
from .run import ERROR, Run, Settings, run, settings_from_args

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    environ = dict(os.environ if env is None else env)
    on_github = args == ["--github"]
    try:
        checkout_copy(Path(environ.get("GITHUB_WORKSPACE") or Path.cwd()))
        if on_github:
            return _github(environ)
        settings = settings_from_args(args)
        finished = run(settings)
    except FailgateError as exc:
        if on_github:  # a refusal is a verdict too: annotated, and in the step's outputs
            return _github_error(environ, exc)
        from ..output.github import inert

        print(inert(f"failgate: error: {exc}"), file=sys.stderr)
        return ERROR.code
    _say(finished)
    return finished.outcome.code


def checkout_copy(workspace: Path, package: Path | None = None) -> None:
    """Refuse a failgate run from a folder of ``workspace`` that was not installed: the
    checkout's own ``pytest_failgate/``, put first on ``sys.path`` by ``python -m``
    (``install.checkout_copy``, the answer the pytest plugin gets too)."""
    from .. import __file__ as init
    from ..core.base.install import checkout_copy as why_refused

    instead = ("run `python -I -m pytest_failgate.ci` (-I: the working directory is not on "
               "the path)" if not sys.flags.isolated else
               "install failgate in a virtual environment (docs: Install) and run it from there")
    why = why_refused(workspace, package or Path(init).parent, instead)
    if why is not None:
        raise FailgateError(why)


def _say(finished: Run) -> None:
    from ..output.github import inert

    out = finished.settings.out_dir
    print(inert(f"failgate ci: {finished.outcome.verdict} (exit {finished.outcome.code}); "
                f"{out / 'failgate.md'}, {out / 'verdict.json'}"))
    for item in finished.failed:
        print(inert(f"  failed: {item}"))  # a report's name is its author's, never a command


def _github(env: dict[str, str]) -> int:
    from . import github

    try:
        settings, why_no_guard = github.settings(env)
        finished = run(settings, why_no_guard)
    except FailgateError as exc:
        return _github_error(env, exc)
    for line in github.annotation_lines(finished, github.workspace(env)):
        print(line)
    if not github.append_step_summary(github.truncate(finished.markdown,
                                                      github.SUMMARY_LIMIT)):
        print("failgate ci: GITHUB_STEP_SUMMARY is not set; no job summary")
    url = _comment(env, finished, settings)
    github.set_outputs(env, github.outputs(finished, url))
    _say(finished)
    return finished.outcome.code


def _github_error(env: Mapping[str, str], exc: FailgateError) -> int:
    """An error before the gate could run (a refusal, a bad input) as the Action reports a
    verdict: an ``::error`` annotation, the step outputs and a line of the job summary."""
    from . import github

    print(github.annotation(f"failgate: {exc}", title="failgate"))
    github.set_outputs(env, {"verdict": ERROR.verdict, "exit-code": str(ERROR.code),
                             "gate-verdict": ERROR.verdict, "failed": "[]",
                             "failed-count": "0"})
    said = one_line(str(exc)).replace("`", "'")  # a file's name is data, never Markdown
    github.append_step_summary(f"## failgate: {ERROR.mark} {ERROR.verdict}\n\n"
                               f"{ERROR.mark} the gate did not run: `{said}`\n")
    return ERROR.code


def _comment(env: Mapping[str, str], finished: Run, settings: Settings) -> str | None:
    """Create or edit the pull request's comment; a failure warns, never changes the
    verdict (a fork's pull request gets a read-only token)."""
    from . import comment, github

    token = github.input_value(env, "github-token")
    if not token:
        return None
    number = github.pull_request_number(env, github.event(env))
    repository = env.get("GITHUB_REPOSITORY", "")
    if number is None or not repository:
        print(f"failgate ci: no pull-request comment: not a pull request "
              f"({env.get('GITHUB_EVENT_NAME') or 'no event'})")
        return None
    api = env.get("GITHUB_API_URL") or "https://api.github.com"
    key = github.input_value(env, "comment-key") or "failgate"
    try:
        posted = comment.upsert(api, repository, number, token, finished.markdown, key)
    except comment.CommentError as exc:
        print(github.annotation(f"could not write the pull-request comment: {exc}",
                                title="failgate comment", level="warning"))
        return None
    print(f"failgate ci: {posted.action} the pull-request comment {posted.url}")
    return posted.url


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
