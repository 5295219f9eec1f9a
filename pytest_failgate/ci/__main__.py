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
docs do the same; and this module refuses to run from a folder of the working directory
(or ``GITHUB_WORKSPACE``) unless that folder is what was installed (an editable install).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.base.errors import FailgateError
from .run import ERROR, Run, Settings, run, settings_from_args

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    environ = dict(os.environ if env is None else env)
    try:
        checkout_copy(Path(environ.get("GITHUB_WORKSPACE") or Path.cwd()))
        if args == ["--github"]:
            return _github(environ)
        settings = settings_from_args(args)
        finished = run(settings)
    except FailgateError as exc:
        from ..output.github import inert

        print(inert(f"failgate: error: {exc}"), file=sys.stderr)
        return ERROR.code
    _say(finished)
    return finished.outcome.code


def checkout_copy(workspace: Path, package: Path | None = None) -> None:
    """Refuse a failgate run from a folder of ``workspace`` that was not installed: the
    checkout's own ``pytest_failgate/``, put first on ``sys.path`` by ``python -m``."""
    from .. import __file__ as init
    from ..core.base.install import installed_from

    here = (package or Path(init).parent).resolve()
    try:
        here.relative_to(workspace.resolve())
    except ValueError:
        return  # site-packages, or a checkout elsewhere: the installed copy
    source = installed_from()
    if source is not None and source[0] == "editable" and here.is_relative_to(
            Path(source[1]).resolve()):
        return  # the checkout is what was installed (failgate's own repository)
    raise FailgateError(
        f"this failgate is the folder {here} of the checkout it would judge, not the "
        "installed failgate (python -m puts the working directory first): run `python -I "
        "-m pytest_failgate.ci`, or rename the folder")


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
        print(github.annotation(f"failgate: {exc}", title="failgate"))
        github.set_outputs(env, {"verdict": ERROR.verdict, "exit-code": str(ERROR.code)})
        return ERROR.code
    for line in github.annotation_lines(finished, github.workspace(env)):
        print(line)
    if not github.append_step_summary(github.truncate(finished.markdown,
                                                      github.SUMMARY_LIMIT)):
        print("failgate ci: GITHUB_STEP_SUMMARY is not set; no job summary")
    url = _comment(env, finished, settings)
    github.set_outputs(env, github.outputs(finished, url))
    _say(finished)
    return finished.outcome.code


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
