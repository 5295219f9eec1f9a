"""One pull-request comment per gate, created once and then edited in place.

The comment carries a hidden marker (an HTML comment naming the gate); each run lists
the pull request's comments (every page), edits the first one holding the marker that
the token's own user wrote, and creates one only when none does. Anyone can paste the
marker into a comment of theirs: a comment by another author is never edited (the
token's user is ``GET /user``'s login; a ``GITHUB_TOKEN`` may not read it, and then
its author is ``github-actions[bot]``).

The token goes only to the API's origin: a redirect to another scheme, host or port
is refused, not followed with the ``Authorization`` header (urllib would follow it and
send the header along). The REST calls are GitHub's documented ones:
``GET /repos/{repo}/issues/{n}/comments``, ``PATCH /repos/{repo}/issues/comments/{id}``,
``POST /repos/{repo}/issues/{n}/comments``, ``GET /user``, with a bearer token and the
``application/vnd.github+json`` media type. urllib only: no dependency for five calls.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import IO, Any
from urllib.parse import urlsplit

from .. import __version__
from ..core.base.classes import dataclass

API_VERSION = "2022-11-28"
BODY_LIMIT = 65_536  # characters GitHub accepts in a comment
PER_PAGE = 100
MAX_PAGES = 100
TIMEOUT = 30  # seconds per request
_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="next"')
# Who writes a comment with a GITHUB_TOKEN, which cannot read ``GET /user``.
ACTIONS_BOT = "github-actions[bot]"


class CommentError(Exception):
    """A REST call that failed; the message never holds the token."""


@dataclass(frozen=True)
class Posted:
    action: str  # "created" or "updated"
    url: str  # the comment's page
    id: int


def marker(key: str) -> str:
    """The hidden line that finds this gate's comment again (``key`` tells gates apart)."""
    safe = re.sub(r"[^\w.:/-]", "-", key) or "failgate"
    return f"<!-- pytest-failgate:{safe} -->"


def upsert(api: str, repository: str, number: int, token: str, body: str, key: str) -> Posted:
    """Create or edit the gate's comment on pull request ``number``."""
    client = _Client(api.rstrip("/"), token)
    tag = marker(key)
    text = _fit(f"{tag}\n{body}")
    url: str | None = (f"{client.api}/repos/{repository}/issues/{number}/comments"
                       f"?per_page={PER_PAGE}")
    for _ in range(MAX_PAGES):
        if url is None:
            break
        comments, url = client.call("GET", url)
        for comment in comments if isinstance(comments, list) else []:
            if (isinstance(comment, dict) and tag in str(comment.get("body", ""))
                    and _author(comment) == client.login()):
                edited, _ = client.call(
                    "PATCH", f"{client.api}/repos/{repository}/issues/comments/{comment['id']}",
                    {"body": text})
                return _posted("updated", edited)
    created, _ = client.call("POST", f"{client.api}/repos/{repository}/issues/{number}/comments",
                             {"body": text})
    return _posted("created", created)


def _posted(action: str, comment: Any) -> Posted:
    if not isinstance(comment, dict) or not isinstance(comment.get("id"), int):
        raise CommentError(f"the comment was {action}, but the answer did not say which")
    return Posted(action, str(comment.get("html_url", "")), comment["id"])


def _author(comment: dict[str, Any]) -> str | None:
    user = comment.get("user")
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) else None


def same_origin(first: str, second: str) -> bool:
    """Whether two URLs share scheme, host and port (where a token may go)."""
    one, two = urlsplit(first), urlsplit(second)
    ports = {"http": 80, "https": 443}
    try:
        return (one.scheme.lower(), one.hostname, one.port or ports.get(one.scheme.lower())) == (
            two.scheme.lower(), two.hostname, two.port or ports.get(two.scheme.lower()))
    except ValueError:  # a port that is not a number
        return False


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect within the API's origin; one to another origin is an error, so
    the ``Authorization`` header never leaves it."""

    def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int,
                         msg: str, headers: Any, newurl: str) -> urllib.request.Request | None:
        if not same_origin(req.full_url, newurl):
            raise CommentError(f"{req.get_method()} {req.full_url.split('?')[0]}: redirected to "
                               f"another origin ({urlsplit(newurl).netloc or newurl}); not "
                               "followed with the token")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_SameOriginRedirects)


def _fit(text: str) -> str:
    if len(text) <= BODY_LIMIT:
        return text
    tail = "\n\n… (cut to fit a comment: the whole report is in the job summary)\n"
    return text[: BODY_LIMIT - len(tail)].rpartition("\n")[0] + tail


class _Client:
    def __init__(self, api: str, token: str) -> None:
        self.api = api
        self.headers = {
            "Accept": "application/vnd.github+json",
            "Authorization": f"Bearer {token}",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": f"pytest-failgate/{__version__}",
        }
        self._login: str | None = None

    def login(self) -> str:
        """The token's user, who wrote the comments this client may edit (asked once)."""
        if self._login is None:
            try:
                user, _ = self.call("GET", f"{self.api}/user")
            except CommentError:  # a GITHUB_TOKEN: "Resource not accessible by integration"
                user = None
            login = user.get("login") if isinstance(user, dict) else None
            self._login = login if isinstance(login, str) and login else ACTIONS_BOT
        return self._login

    def call(self, method: str, url: str, payload: dict[str, str] | None = None
             ) -> tuple[Any, str | None]:
        """The decoded answer and the next page's URL (from the ``Link`` header)."""
        data = None
        headers = dict(self.headers)
        if payload is not None:
            data = json.dumps(payload).encode("utf-8")
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        shown = f"{method} {url.split('?')[0]}"
        try:
            with _OPENER.open(request, timeout=TIMEOUT) as answer:
                text = answer.read().decode("utf-8")
                link = answer.headers.get("Link", "")
        except urllib.error.HTTPError as exc:
            said = exc.read().decode("utf-8", "replace")[:300]
            raise CommentError(f"{shown}: HTTP {exc.code} {said}".rstrip()) from None
        except (urllib.error.URLError, OSError) as exc:
            raise CommentError(f"{shown}: {getattr(exc, 'reason', exc)}") from None
        try:
            decoded = json.loads(text) if text else None
        except ValueError:
            raise CommentError(f"{shown}: the answer is not JSON") from None
        found = _NEXT.search(link)
        following = found.group(1) if found else None
        if following is not None and not (same_origin(following, self.api)
                                          and following.startswith(self.api + "/")):
            # the token goes only where the API is
            raise CommentError(f"{shown}: the next page is on another host: {following}")
        return decoded, following
