"""The GitHub Action, run step by step as a runner runs it, without GitHub.

The job is a real git checkout of a pull request (a clone of a local "origin" with
only the pull request's branch, as ``actions/checkout`` leaves it), so the guard must
fetch the base branch itself. The pull-request comment goes to a local HTTP server that
answers as GitHub's REST API does and checks each request (method, path, pagination,
the Accept, Authorization and API-version headers, the JSON body).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from action_runner import ActionRun, read_outputs, run_action
from helpers import EXAMPLES

from pytest_failgate import cli
from pytest_failgate.ci.__main__ import main as ci_main
from pytest_failgate.ci.comment import BODY_LIMIT, CommentError, marker, upsert
from pytest_failgate.ci.run import ERROR, OUTCOMES, Outcome, Run, Settings, outcome
from pytest_failgate.core.base.verdict import RUN_CASES, run_verdict

ROOT = EXAMPLES.parent
TOKEN = "ghs_test0token"


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def _commit(cwd: Path, message: str) -> None:
    _git(cwd, "add", "-A")
    _git(cwd, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", message)


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    """A repository whose main holds the example reports and ceilings, and a pull
    request's branch ``change`` on top."""
    seed = tmp_path / "seed"
    seed.mkdir()
    _git(seed, "init", "-q", "-b", "main")
    shutil.copytree(EXAMPLES / "reports", seed / "reports")
    shutil.copy(ROOT / "ceilings.yaml", seed / "ceilings.yaml")
    _commit(seed, "main")
    _git(seed, "checkout", "-qb", "change")
    bare = tmp_path / "origin.git"
    _git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare))
    shutil.rmtree(seed)
    return bare


def checkout(origin: Path, tmp_path: Path, edit: Any = None) -> Path:
    """The pull request's branch, one commit deep and without main (as in CI), after
    ``edit`` (a function of the work tree) is committed on it."""
    work = tmp_path / "work"
    _git(tmp_path, "clone", "-q", "--depth=1", "--no-single-branch", origin.as_uri(), str(work))
    _git(work, "checkout", "-q", "change")
    if edit is not None:
        edit(work)
        _commit(work, "the change")
    _git(work, "update-ref", "-d", "refs/remotes/origin/main")
    assert "origin/main" not in _git(work, "branch", "-r")
    return work


def regress_and_loosen(work: Path) -> None:
    shutil.copy(EXAMPLES / "regression" / "eval_summary.json", work / "reports")
    ceilings = work / "ceilings.yaml"
    ceilings.write_text(ceilings.read_text().replace("  unknown: 35\n", "  unknown: 40\n"))


PR_EVENT = {"pull_request": {"number": 7, "base": {"ref": "main"}}}
BASE_ENV = {"GITHUB_BASE_REF": "main", "GITHUB_HEAD_REF": "change"}


def gate(work: Path, tmp_path: Path, name: str = "runner", env: dict[str, str] | None = None,
         inputs: dict[str, str] | None = None) -> ActionRun:
    """The action on the pull request's checkout, with ``reports: reports`` by default."""
    # no commit status: its step has its own tests (test_action_status.py)
    return run_action(work, {"reports": "reports", "status": "", **(inputs or {})},
                      event=PR_EVENT,
                      extra_env={**BASE_ENV, **(env or {})}, temp=tmp_path / name)


@pytest.mark.heavy
def test_a_passing_pull_request_fetches_its_base_guards_and_reports(
        origin: Path, tmp_path: Path) -> None:
    work = checkout(origin, tmp_path)
    done = gate(work, tmp_path)
    assert not done.failed, done.stdout + "".join(s.stderr for s in done.steps)
    assert done.outputs["verdict"] == "pass"
    assert done.outputs["exit-code"] == "0"
    assert json.loads(done.outputs["failed"]) == []
    assert done.outputs["comment-url"] == ""  # no token, no comment
    assert done.summary.startswith("## failgate: ✅ pass\n")
    assert "### failgate: ✅ all 24 checks passed" in done.summary
    assert "✅ guard: nothing in ceilings.yaml is looser than at origin/main" in done.summary
    assert "git fetch --no-tags --depth=1 origin main" in done.stdout
    assert done.annotations == []
    # the summary is the report, with a blank line before whatever the job appends
    assert done.summary == Path(done.outputs["markdown"]).read_text(encoding="utf-8") + "\n"


@pytest.mark.heavy
def test_a_regression_and_a_loosening_fail_with_annotations_on_their_lines(
        origin: Path, tmp_path: Path) -> None:
    work = checkout(origin, tmp_path, regress_and_loosen)
    done = gate(work, tmp_path)
    assert done.failed
    assert done.step("gate").returncode == 1
    assert done.outputs["verdict"] == "fail"
    assert done.outputs["exit-code"] == "1"
    lines = (work / "ceilings.yaml").read_text().splitlines()
    unknown_line = lines.index("  unknown: 40") + 1
    assert json.loads(done.outputs["failed"]) == [
        "ceilings.yaml::eval_summary::retrieval_miss", "ceilings.yaml::eval_summary::total",
        "ceilings.yaml::guard"]
    assert done.outputs["failed-count"] == "3"
    miss = [a for a in done.annotations if "eval_summary%3A%3Aretrieval_miss" in a]
    assert len(miss) == 1
    miss_line = next(i for i, line in enumerate(lines, 1)
                     if line == "    retrieval_miss: 1")
    assert miss[0].startswith(f"::error file=ceilings.yaml,line={miss_line},title=failgate "
                              "eval_summary%3A%3Aretrieval_miss::")
    assert "retrieval_miss: 4 cases, 3 over the ceiling of 1" in miss[0]
    loosened = [a for a in done.annotations if "title=failgate guard" in a]
    assert loosened == [
        f"::error file=ceilings.yaml,line={unknown_line},title=failgate guard::loosened since "
        f"origin/main without a reason: ceilings.yaml:{unknown_line} ceilings.unknown: 35 -> 40"
        "  (no reason written)"]
    assert done.summary.startswith("## failgate: ❌ fail\n")
    assert "❌ guard: 1 of 1 loosening in ceilings.yaml since origin/main" in done.summary


@pytest.mark.heavy
def test_the_guard_compares_with_the_runs_own_reports(
        origin: Path, tmp_path: Path) -> None:
    """docs/ci.md: a report renamed while a ``reports:`` override names it is a loosening
    (a looser default governs it now). Only the run knows its reports' names: the step's
    guard is given them, as the gate's own guard setting is."""
    def rename(work: Path) -> None:
        (work / "reports" / "eval_summary.json").rename(work / "reports" / "renamed.json")

    work = checkout(origin, tmp_path, rename)
    done = gate(work, tmp_path)
    assert done.outputs["verdict"] == "fail", done.stdout
    assert json.loads(done.outputs["failed"]) == ["ceilings.yaml::guard"]
    assert "eval_summary" in done.summary.split("guard:", 1)[1]
    assert "### failgate: ❌ the ceilings guard against origin/main found a loosening" \
        in done.summary


@pytest.mark.heavy
def test_an_input_error_is_the_error_verdict_with_its_message(
        origin: Path, tmp_path: Path) -> None:
    work = checkout(origin, tmp_path)
    done = gate(work, tmp_path, inputs={"reports": "no-such-folder", "guard-base": "none"})
    assert done.step("gate").returncode == 2
    assert done.outputs["verdict"] == "error"
    assert "no-such-folder" in done.summary
    assert "The loosening guard did not run: turned off (guard-base: none)." in done.summary
    assert any(a.startswith("::error title=failgate::") and "no-such-folder" in a
               for a in done.annotations)


@pytest.mark.heavy
def test_outside_a_pull_request_the_guard_says_why_it_did_not_run(
        origin: Path, tmp_path: Path) -> None:
    def slack(work: Path) -> None:  # a ceiling above its count: strict mode fails it
        ceilings = work / "ceilings.yaml"
        ceilings.write_text(ceilings.read_text().replace("    unknown: 0\n", "    unknown: 2\n"))

    work = checkout(origin, tmp_path, slack)
    done = run_action(work, {"reports": "reports"}, event_name="push", event={},
                      temp=tmp_path / "push")
    assert done.outputs["verdict"] == "pass"
    assert "The loosening guard did not run: not a pull request (push)" in done.summary
    strict = run_action(work, {"reports": "reports", "strict": "true"}, event_name="push",
                        event={}, temp=tmp_path / "strict")
    assert strict.outputs["verdict"] == "fail"
    assert json.loads(strict.outputs["failed"]) == ["ceilings.yaml::eval_summary::unknown"]
    assert "(slack)" in strict.summary


@pytest.mark.slow  # CI runs it; the default run keeps the main paths
def test_a_working_directory_and_quoted_report_paths_are_honoured(
        origin: Path, tmp_path: Path) -> None:
    def nest(work: Path) -> None:
        (work / "eval").mkdir()
        (work / "reports").rename(work / "eval" / "my reports")
        (work / "ceilings.yaml").rename(work / "eval" / "ceilings.yaml")

    work = checkout(origin, tmp_path, nest)
    done = gate(work, tmp_path, inputs={"reports": '"my reports"', "working-directory": "eval",
                                        "guard-base": "none"})
    assert done.outputs["verdict"] == "pass", done.stdout


@pytest.mark.slow  # CI runs it; the default run keeps the main paths
def test_an_unknown_install_mode_and_a_python_without_failgate_are_refused(
        origin: Path, tmp_path: Path) -> None:
    work = checkout(origin, tmp_path)
    done = gate(work, tmp_path, inputs={"install": "sometimes"})
    assert done.steps[0].returncode == 2
    assert "input install: auto, always or never" in done.stdout
    bare = tmp_path / "bare-python"
    subprocess.run([shutil.which("python3") or "python3", "-m", "venv", "--without-pip",
                    str(bare)], check=True)
    done = gate(work, tmp_path, "never", inputs={"install": "never"},
                env={"PATH": f"{bare / 'bin'}:/usr/bin:/bin"})
    assert done.steps[0].returncode == 2
    assert "cannot import pytest_failgate.ci (install: never)" in done.stdout


# -- the installed failgate decides, never a folder of the checkout ------------------------

FAKE_CI = """import os
with open(os.environ["GITHUB_OUTPUT"], "a") as out:
    out.write("verdict=pass\\nexit-code=0\\n")
print("the checkout's own failgate ran")
"""


def plant_failgate(work: Path) -> None:
    """A pull request that regresses, and adds a pytest_failgate/ that says pass."""
    regress_and_loosen(work)
    (work / "pytest_failgate" / "ci").mkdir(parents=True)
    (work / "pytest_failgate" / "__init__.py").write_text("", encoding="utf-8")
    (work / "pytest_failgate" / "ci" / "__init__.py").write_text("", encoding="utf-8")
    (work / "pytest_failgate" / "ci" / "__main__.py").write_text(FAKE_CI, encoding="utf-8")


@pytest.mark.heavy
def test_a_pytest_failgate_folder_in_the_checkout_is_never_imported_by_the_action(
        origin: Path, tmp_path: Path) -> None:
    work = checkout(origin, tmp_path, plant_failgate)
    done = gate(work, tmp_path)
    assert "the checkout's own failgate ran" not in done.stdout
    assert done.outputs["verdict"] == "fail"
    assert done.step("gate").returncode == 1
    assert "FAILED ceilings.yaml::guard" not in done.stdout  # the installed one ran: its report
    assert "❌ guard:" in done.summary


def _copy_of_failgate(work: Path) -> None:
    shutil.copytree(ROOT / "pytest_failgate", work / "pytest_failgate",
                    ignore=shutil.ignore_patterns("__pycache__"))


@pytest.mark.heavy
def test_python_m_from_a_checkout_holding_a_failgate_copy_refuses_it(tmp_path: Path) -> None:
    work = tmp_path / "work"
    shutil.copytree(EXAMPLES / "reports", work / "reports")
    shutil.copy(ROOT / "ceilings.yaml", work / "ceilings.yaml")
    _copy_of_failgate(work)  # e.g. an old copy, edited by the pull request
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PYTHON"))}
    command = ["-m", "pytest_failgate.ci", "reports", "--out-dir", str(tmp_path / "out")]
    shadowed = subprocess.run([sys.executable, *command], cwd=work, env=env,
                              capture_output=True, text=True, check=False)
    assert shadowed.returncode == 2, shadowed.stdout + shadowed.stderr
    assert (f"this failgate is the folder {work.resolve() / 'pytest_failgate'} of the checkout "
            "it would judge (importable because its folder is on the path), not the installed "
            "failgate") in shadowed.stderr
    assert "run `python -I -m pytest_failgate.ci`" in shadowed.stderr
    isolated = subprocess.run([sys.executable, "-I", *command], cwd=work, env=env,
                              capture_output=True, text=True, check=False)
    assert isolated.returncode == 0, isolated.stdout + isolated.stderr  # the control
    assert "failgate ci: pass (exit 0)" in isolated.stdout


def test_only_an_editable_install_of_the_checkout_may_run_from_it(tmp_path: Path) -> None:
    import pytest_failgate
    from pytest_failgate.ci.__main__ import checkout_copy
    from pytest_failgate.core.base.errors import FailgateError
    from pytest_failgate.core.base.install import installed_from

    installed = Path(str(pytest_failgate.__file__)).parent
    if (installed_from() or ("",))[0] == "editable":  # a development install of this tree
        checkout_copy(installed.parent)  # failgate's own repository, gating itself
    (tmp_path / "pytest_failgate").mkdir()
    with pytest.raises(FailgateError, match="of the checkout it would judge"):
        checkout_copy(tmp_path, tmp_path / "pytest_failgate")
    checkout_copy(tmp_path / "elsewhere")  # the installed copy is not in that workspace


# -- the pull-request comment, against a local REST API ------------------------------------

@dataclass
class FakeGitHub:
    """Issue comments of one pull request, served as GitHub's REST API serves them."""

    repository: str = "octo-org/octo-repo"
    number: int = 7
    comments: list[dict[str, Any]] = field(default_factory=list)
    requests: list[tuple[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    fail_with: int | None = None
    url: str = ""
    login: str | None = None  # the token's user; None: a GITHUB_TOKEN, which cannot ask
    moved_to: str | None = None  # the listing answers 301 to this origin's /repositories/42

    def check(self, handler: BaseHTTPRequestHandler) -> None:
        headers = handler.headers
        if headers.get("Accept") != "application/vnd.github+json":
            self.problems.append(f"Accept: {headers.get('Accept')}")
        if headers.get("Authorization") != f"Bearer {TOKEN}":
            self.problems.append(f"Authorization: {headers.get('Authorization')}")
        if headers.get("X-GitHub-Api-Version") != "2022-11-28":
            self.problems.append(f"X-GitHub-Api-Version: {headers.get('X-GitHub-Api-Version')}")
        if not headers.get("User-Agent"):
            self.problems.append("no User-Agent")

    def answer(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        self.check(handler)
        parts = urlsplit(handler.path)
        self.requests.append((method, handler.path))
        if self.fail_with is not None:
            return self._send(handler, self.fail_with, {"message": "Resource not accessible"})
        body: dict[str, Any] = {}
        if method in ("POST", "PATCH"):
            if handler.headers.get("Content-Type") != "application/json":
                self.problems.append(f"Content-Type: {handler.headers.get('Content-Type')}")
            length = int(handler.headers.get("Content-Length", "0"))
            body = json.loads(handler.rfile.read(length))
            if set(body) != {"body"} or not isinstance(body["body"], str):
                self.problems.append(f"body: {body}")
        listing = f"/repos/{self.repository}/issues/{self.number}/comments"
        if method == "GET" and parts.path == "/user":
            if self.login is None:
                return self._send(handler, 403, {
                    "message": "Resource not accessible by integration"})
            return self._send(handler, 200, {"login": self.login, "type": "User"})
        if method == "GET" and parts.path == listing and self.moved_to is not None:
            handler.send_response(301)
            handler.send_header("Location", f"{self.moved_to}/repositories/42/issues/"
                                            f"{self.number}/comments?{parts.query}")
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return None
        if method == "GET" and parts.path in (listing, f"/repositories/42/issues/{self.number}"
                                                       "/comments"):
            query = parse_qs(parts.query)
            per_page = int(query.get("per_page", ["30"])[0])
            page = int(query.get("page", ["1"])[0])
            chunk = self.comments[(page - 1) * per_page: page * per_page]
            link = None
            if page * per_page < len(self.comments):
                link = f'<{self.url}{listing}?per_page={per_page}&page={page + 1}>; rel="next"'
            return self._send(handler, 200, chunk, link)
        if method == "POST" and parts.path == listing:
            comment = {"id": 9000 + len(self.comments), "body": body["body"],
                       "html_url": f"https://github.example/pr/7#c{len(self.comments)}",
                       "user": {"login": self.login or "github-actions[bot]",
                                "type": "Bot" if self.login is None else "User"}}
            self.comments.append(comment)
            return self._send(handler, 201, comment)
        found = re.fullmatch(rf"/repos/{self.repository}/issues/comments/(\d+)", parts.path)
        if method == "PATCH" and found:
            for comment in self.comments:
                if comment["id"] == int(found.group(1)):
                    comment["body"] = body["body"]
                    return self._send(handler, 200, comment)
        self.problems.append(f"unexpected {method} {handler.path}")
        return self._send(handler, 404, {"message": "Not Found"})

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, payload: Any,
              link: str | None = None) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        if link:
            handler.send_header("Link", link)
        handler.end_headers()
        handler.wfile.write(data)


@contextlib.contextmanager
def serve(fake: FakeGitHub) -> Iterator[FakeGitHub]:
    """``fake`` on a port of 127.0.0.1 of its own (its ``url``)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fake.answer(self, "GET")

        def do_POST(self) -> None:
            fake.answer(self, "POST")

        def do_PATCH(self) -> None:
            fake.answer(self, "PATCH")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()
    fake.comments = [{"id": i, "body": f"an unrelated comment {i}",
                      "html_url": f"https://github.example/pr/7#c{i}"} for i in range(150)]
    with serve(fake) as served:
        yield served


@pytest.mark.heavy
def test_the_comment_is_created_once_then_updated_in_place(
        origin: Path, tmp_path: Path, github: FakeGitHub) -> None:
    api = {"GITHUB_API_URL": github.url}
    listing = "/repos/octo-org/octo-repo/issues/7/comments"
    work = checkout(origin, tmp_path)
    first = gate(work, tmp_path, "first", env=api, inputs={"github-token": TOKEN})
    assert first.outputs["verdict"] == "pass"
    assert github.requests == [("GET", f"{listing}?per_page=100"),
                               ("GET", f"{listing}?per_page=100&page=2"),
                               ("POST", listing)]
    ours = [c for c in github.comments if marker("failgate") in c["body"]]
    assert len(ours) == 1
    report = Path(first.outputs["markdown"]).read_text(encoding="utf-8")
    assert ours[0]["body"] == f"{marker('failgate')}\n{report}"
    assert first.outputs["comment-url"] == ours[0]["html_url"]

    regress_and_loosen(work)  # the pull request gets a new commit
    _commit(work, "a regression")
    github.requests.clear()
    second = gate(work, tmp_path, "second", env=api, inputs={"github-token": TOKEN})
    assert second.outputs["verdict"] == "fail"
    assert github.requests == [("GET", f"{listing}?per_page=100"),
                               ("GET", f"{listing}?per_page=100&page=2"),
                               ("GET", "/user"),  # whose the marked comment is: ours
                               ("PATCH", f"/repos/octo-org/octo-repo/issues/comments/"
                                         f"{ours[0]['id']}")]
    assert [c for c in github.comments if marker("failgate") in c["body"]] == ours
    assert ours[0]["body"].startswith(f"{marker('failgate')}\n## failgate: ❌ fail\n")
    assert len(github.comments) == 151
    assert github.problems == []
    assert TOKEN not in first.stdout + second.stdout


@pytest.mark.slow  # CI runs it; the default run keeps the main paths
def test_another_gate_keeps_its_own_comment(
        origin: Path, tmp_path: Path, github: FakeGitHub) -> None:
    api = {"GITHUB_API_URL": github.url}
    work = checkout(origin, tmp_path)
    for name, key in (("a", "failgate"), ("b", "nightly"), ("c", "failgate"), ("d", "nightly")):
        gate(work, tmp_path, name, env=api, inputs={"github-token": TOKEN, "comment-key": key})
    assert [method for method, _ in github.requests if method != "GET"] == [
        "POST", "POST", "PATCH", "PATCH"]
    assert len(github.comments) == 152
    assert github.problems == []


@pytest.mark.slow  # CI runs it; the default run keeps the main paths
def test_a_token_without_write_access_warns_and_keeps_the_verdict(
        origin: Path, tmp_path: Path, github: FakeGitHub) -> None:
    github.fail_with = 403
    work = checkout(origin, tmp_path)
    done = gate(work, tmp_path, env={"GITHUB_API_URL": github.url}, inputs={"github-token": TOKEN})
    assert not done.failed
    assert done.outputs["verdict"] == "pass"
    warning = [a for a in done.annotations if a.startswith("::warning")]
    assert len(warning) == 1
    assert "HTTP 403" in warning[0]
    assert TOKEN not in done.stdout


@pytest.mark.slow  # CI runs it; the default run keeps the main paths
def test_no_comment_is_written_outside_a_pull_request(
        origin: Path, tmp_path: Path, github: FakeGitHub) -> None:
    work = checkout(origin, tmp_path)
    done = run_action(work, {"reports": "reports", "github-token": TOKEN}, event_name="push",
                      extra_env={"GITHUB_API_URL": github.url}, temp=tmp_path / "push")
    assert done.outputs["verdict"] == "pass"
    assert github.requests == []
    assert "no pull-request comment: not a pull request (push)" in done.stdout


def _marked(comment_id: int, login: str, text: str = "a report") -> dict[str, Any]:
    return {"id": comment_id, "body": f"{marker('failgate')}\n{text}",
            "html_url": f"https://github.example/pr/7#c{comment_id}",
            "user": {"login": login, "type": "Bot" if login.endswith("[bot]") else "User"}}


def test_a_marked_comment_by_another_author_is_never_edited(github: FakeGitHub) -> None:
    # anyone can paste the marker: the first marked comment is someone else's
    github.comments[3] = _marked(3, "mallory", "mallory's words")
    posted = upsert(github.url, github.repository, 7, TOKEN, "the gate's report", "failgate")
    assert posted.action == "created"
    assert github.comments[3]["body"].endswith("mallory's words")
    assert not [path for method, path in github.requests if method == "PATCH"]
    assert github.comments[-1]["body"] == f"{marker('failgate')}\nthe gate's report"
    assert github.comments[-1]["user"]["login"] == "github-actions[bot]"
    assert github.problems == []


def test_the_tokens_own_marked_comment_is_edited_not_anothers(github: FakeGitHub) -> None:
    github.login = "octocat"  # a personal token: GET /user answers
    github.comments[3] = _marked(3, "github-actions[bot]", "the bot's")  # not this token's
    github.comments[5] = _marked(5, "octocat", "octocat's earlier report")
    posted = upsert(github.url, github.repository, 7, TOKEN, "the gate's report", "failgate")
    assert (posted.action, posted.id) == ("updated", 5)
    assert github.comments[5]["body"] == f"{marker('failgate')}\nthe gate's report"
    assert github.comments[3]["body"].endswith("the bot's")
    assert [r for r in github.requests if r[0] != "GET" or r[1] == "/user"] == [
        ("GET", "/user"), ("PATCH", "/repos/octo-org/octo-repo/issues/comments/5")]
    assert github.problems == []


def test_a_github_token_edits_the_actions_bots_marked_comment(github: FakeGitHub) -> None:
    github.comments[5] = _marked(5, "github-actions[bot]", "the last run's")
    posted = upsert(github.url, github.repository, 7, TOKEN, "this run's", "failgate")
    assert (posted.action, posted.id) == ("updated", 5)
    assert github.problems == []


def test_the_token_never_follows_a_redirect_to_another_origin(github: FakeGitHub) -> None:
    with serve(FakeGitHub()) as elsewhere:  # another port of the same host: another origin
        github.moved_to = elsewhere.url
        with pytest.raises(CommentError, match=r"redirected to another origin \(127\.0\.0\.1:"
                                               r"\d+\); not followed with the token"):
            upsert(github.url, github.repository, 7, TOKEN, "a report", "failgate")
        assert elsewhere.requests == []
    assert github.requests == [("GET", "/repos/octo-org/octo-repo/issues/7/comments"
                                       "?per_page=100")]


def test_a_redirect_within_the_api_is_followed(github: FakeGitHub) -> None:
    github.moved_to = github.url  # a renamed repository: GitHub answers 301 on its own origin
    posted = upsert(github.url, github.repository, 7, TOKEN, "a report", "failgate")
    assert posted.action == "created"
    assert ("GET", "/repositories/42/issues/7/comments?per_page=100") in github.requests
    assert github.problems == []  # every request carried the token


def test_a_report_longer_than_a_comment_is_cut_at_a_line() -> None:
    from pytest_failgate.ci.comment import _fit

    text = "\n".join(f"| row {i} | {'x' * 50} |" for i in range(3000))
    cut = _fit(text)
    assert len(cut) <= BODY_LIMIT
    assert cut.endswith("(cut to fit a comment: the whole report is in the job summary)\n")
    assert cut.splitlines()[-3].endswith("|")


# -- one table of exit codes --------------------------------------------------------------

def test_exit_codes_map_through_one_table() -> None:
    assert {code: o.verdict for code, o in OUTCOMES.items()} == {
        0: "pass", 1: "fail", 2: "error", 3: "inconclusive"}
    assert outcome(4) is ERROR
    assert outcome(-9) is ERROR  # killed: never a pass


@pytest.mark.parametrize(("facts", "expected"), [
    ({}, "pass"), ({"inconclusive": 1}, "inconclusive"),
    ({"inconclusive": 1, "guard_failed": 1}, "fail"), ({"failed": 2}, "fail"),
    ({"guard_failed": 1}, "fail"), ({"failed": 1, "guard_error": 1}, "error"),
    ({"not_loaded": 1, "failed": 3, "inconclusive": 1}, "error"),
    ({"failed": 1, "inconclusive": 1}, "fail"),
])
def test_the_run_verdict_is_the_first_case_of_one_table_that_holds(
        facts: dict[str, int], expected: str) -> None:
    """What the step exits with is the core's verdict: an error before a fail before an
    inconclusive run, the gate and the guard in one table."""
    assert run_verdict(facts) == expected
    assert {verdict for _, verdict in RUN_CASES} <= {o.verdict for o in OUTCOMES.values()}
    run = Run(Settings(("r",)), None)
    assert run.outcome is ERROR  # no result: never a pass


def test_an_inconclusive_gate_is_the_steps_verdict_and_exit_code(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real provider outage (promptfoo's own output) exits 3, "inconclusive", in every
    output of the step."""
    data = ROOT / "tests" / "data" / "promptfoo" / "workflows"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evals").mkdir()
    shutil.copy(data / "jsonl" / "results.jsonl", tmp_path / "evals")
    assert cli.main(["init", "evals"]) == 0
    shutil.copy(data / "outage_jsonl" / "results.jsonl", tmp_path / "evals")
    out = tmp_path / "out"
    output = tmp_path / "github_output"
    env = {"INPUT_REPORTS": "evals", "INPUT_GUARD_BASE": "none", "INPUT_REPORT_DIR": str(out),
           "GITHUB_OUTPUT": str(output)}
    assert ci_main(["--github"], env) == 3
    outputs = read_outputs(output.read_text())
    assert (outputs["verdict"], outputs["gate-verdict"], outputs["exit-code"]) == (
        "inconclusive", "inconclusive", "3")
    assert json.loads((out / "verdict.json").read_text())["verdict"] == "inconclusive"
    assert json.loads((out / "gate.json").read_text())["verdict"] == "inconclusive"
    assert (out / "failgate.md").read_text().startswith(
        "## failgate: ❔ inconclusive\n\n### failgate: ❔ 1 report cannot be judged (not a "
        "pass, not a regression)\n")


def test_other_ci_systems_get_the_same_step_from_the_command_line(
        origin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    work = checkout(origin, tmp_path, regress_and_loosen)
    monkeypatch.chdir(work)
    code = ci_main(["reports", "--guard-base", "origin/main", "--out-dir", "out"], {})
    assert code == 1
    verdict = json.loads((work / "out" / "verdict.json").read_text())
    assert verdict == {"verdict": "fail", "exit_code": 1, "gate": "fail", "guard": "fail",
                       "failed": ["ceilings.yaml::eval_summary::retrieval_miss",
                                  "ceilings.yaml::eval_summary::total", "ceilings.yaml::guard"]}
    out = capsys.readouterr().out
    assert "failgate ci: fail (exit 1)" in out
    assert not [line for line in out.splitlines() if line.startswith("::")]


def test_the_outcomes_read_the_same_in_the_table_and_the_docs() -> None:
    docs = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    for o in OUTCOMES.values():
        assert re.search(rf"\|\s*{o.code}\s*\|\s*`?{o.verdict}`?\s*\|", docs), o
    assert isinstance(ERROR, Outcome)


@pytest.mark.parametrize(("inputs", "message"), [
    ({}, "input reports: give the report files or folders to gate"),  # GitHub does not
    # enforce `required: true`
    ({"INPUT_REPORTS": "r", "INPUT_STRICT": "maybe"}, "input strict: expected true or false"),
    ({"INPUT_REPORTS": "'unclosed"}, "input reports: No closing quotation"),
])
def test_a_bad_input_is_an_error_naming_the_input(
        inputs: dict[str, str], message: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "github_output"
    assert ci_main(["--github"], {"GITHUB_OUTPUT": str(output), **inputs}) == 2
    assert read_outputs(output.read_text())["verdict"] == "error"
    said = capsys.readouterr().out
    assert said.startswith("::error title=failgate::failgate: ")
    assert message in said
