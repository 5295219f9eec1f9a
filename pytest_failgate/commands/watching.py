"""``failgate watch FILE ... [-- CMD]``: the report followed as it is written, bounded, and
the harness (``harness.Harness``) stopped as a whole once the verdict is settled.

``commands.sequential`` holds what is gated (the plan, the gate over a run's cases); this
holds how a running report is read and its harness controlled. A report being written is
untrusted input that may never end, so following it is bounded three ways:

- a FIFO, a device or any other special file is refused (``safeopen``), never opened to
  block on;
- a line may hold at most ``LINE_BYTES`` bytes (or the ``--max-report-bytes`` limit, if
  smaller), the whole report at most the ``--max-report-bytes`` limit when one is set;
- ``--idle-seconds``: only a new case is progress (blank lines are not), and the run ends,
  inconclusive, after that long without one, whether or not a harness still runs.
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from functools import partial
from typing import TYPE_CHECKING

from ..core.base.errors import FailgateError
from ..core.base.safeopen import open_regular
from .app import Failgate
from .harness import Harness

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from .config import Config
    from .sequential import Watch, Watched

LINE_BYTES = 64 << 20  # the longest line of a followed report: one case, however verbose
CHUNK = 1 << 20  # read this much at a time: memory stays bounded whatever the report holds
DRAIN_BYTES = 64 << 20  # read at most this much more to count the cases a stopped run paid for
# lines classified at a time (``batches``): the generated loop's set-up spread over them,
# the cases after a settled verdict's few (they are classified, not gated)
BATCH = 256


class Follow:
    """A report's complete lines as they are written (``lines``), bounded (module doc);
    ``idle`` is set when it ended for want of a new case."""

    def __init__(self, path: Path, request: Watch, harness: Harness | None,
                 limit: int | None = None) -> None:
        self.path, self.request, self.harness, self.limit = path, request, harness, limit
        self.line_limit = LINE_BYTES if limit is None else min(LINE_BYTES, limit)
        self.idle = False
        self.offset = 0  # bytes read so far
        self.cases = 0  # non-blank complete lines read so far

    def lines(self) -> Iterator[tuple[bytes, bool]]:
        """Each line as read, and whether it is the report's last, unfinished one (its
        text is decoded without a byte-order mark's removal: ``followed_text``)."""
        offset, partial, number = 0, bytearray(), 0
        progress = time.monotonic()
        while True:
            data = self._read(offset)
            offset += len(data)
            self.offset = offset
            if self.limit is not None and offset > self.limit:
                raise FailgateError(
                    f"the report grew past {self.limit:,} bytes, the limit "
                    "(--max-report-bytes)", self.path, number + 1)
            if b"\n" in data:
                chunks = (bytes(partial) + data).split(b"\n")
                partial = bytearray(chunks.pop())
                for chunk in chunks:
                    number += 1
                    if chunk.strip():
                        progress = time.monotonic()
                        self.cases += 1
                    yield chunk, False
            else:
                partial += data  # a line still being written: grown in place, not copied
            self._check_line(partial, number + 1)
            exited = not data and self.harness is not None and self.harness.poll() is not None
            # a report growing with blank lines only is no progress: idle all the same
            idle = time.monotonic() - progress > self.request.idle_seconds
            if exited or idle:
                self.idle = idle and not exited
                if partial.strip() and not self.idle:
                    yield bytes(partial), True
                return
            if not data:
                time.sleep(self.request.poll_seconds)

    def rest(self, most: int) -> int:
        """The cases read, with those written after the last one read (once the harness is
        stopped: what the run paid for), counting at most ``most`` cases and reading at most
        ``DRAIN_BYTES`` more."""
        cases, offset, partial = self.cases, self.offset, b""
        while cases < most and offset - self.offset < DRAIN_BYTES:
            data = self._read(offset)
            if not data:
                break
            offset += len(data)
            lines = (partial + data).split(b"\n")
            partial = lines.pop()[-self.line_limit:]
            cases += sum(1 for line in lines if line.strip())
        return min(cases, most)

    def _read(self, offset: int) -> bytes:
        """Up to ``CHUNK`` new bytes after ``offset`` (none before the report exists)."""
        if not self.path.exists() and not self.path.is_symlink():
            return b""
        with open_regular(self.path) as handle:  # a FIFO or a device: refused, not opened
            handle.seek(offset)
            return handle.read(CHUNK)

    def _check_line(self, partial: bytearray, number: int) -> None:
        if len(partial) > self.line_limit:
            raise FailgateError(
                f"the line is longer than {self.line_limit:,} bytes without ending, the "
                "longest a case may be", self.path, number)


def followed_text(raw: bytes, last: bool) -> str:
    """A followed line's text, as ``CaseGate.add_line`` reads it."""
    return raw.decode("utf-8" if last else "utf-8-sig", errors="replace")


def replayed_text(raw: bytes, first: bool) -> str:
    """A replayed line's text, as ``CaseGate.add_line`` reads it."""
    return raw.decode("utf-8-sig" if first else "utf-8", errors="replace").rstrip("\r\n")


def replayed_line(raw: bytes, line: int) -> str:
    """A replayed line's text, after ``line`` lines (``CaseGate.add_lines``)."""
    return replayed_text(raw, first=line == 0)


def batches(lines: Iterator[bytes], size: int = BATCH) -> Iterator[list[bytes]]:
    """``lines`` in lists of ``size`` (``CaseGate.add_lines`` classifies each in bulk); an
    error reading them comes after the lines before it, so those are gated first (a
    verdict settled on them ends the run before the error is reached, as line by line)."""
    held: list[bytes] = []
    try:
        for line in lines:
            held.append(line)
            if len(held) >= size:
                yield held
                held = []
    except FailgateError:
        if held:
            yield held
        raise
    if held:
        yield held


def replayed(path: Path, limit: int | None = None) -> Iterator[bytes]:
    """A finished report's lines as read (without their ``\\n``), each bounded as a
    followed report's are: read ``CHUNK`` bytes at a time and split in native code (a
    line longer than the bound is an error naming it, found before it is held whole)."""
    line_limit = LINE_BYTES if limit is None else min(LINE_BYTES, limit)
    with open_regular(path, limit) as handle:
        number, held = 0, 0
        parts: list[bytes] = []  # the line begun in earlier reads (``held`` its size)
        while block := handle.read(CHUNK):
            lines = block.split(b"\n")
            tail = lines.pop()
            for line in lines:
                number += 1
                if parts:
                    line, held = b"".join((*parts, line)), 0
                    parts = []
                if len(line) > line_limit:
                    raise _too_long(line_limit, path, number)
                yield line
            if tail:
                parts.append(tail)
                held += len(tail)
                if held > line_limit:
                    raise _too_long(line_limit, path, number + 1)
        if parts:
            yield b"".join(parts)


def _too_long(line_limit: int, path: Path, number: int) -> FailgateError:
    return FailgateError(f"the line is longer than {line_limit:,} bytes, the longest a case "
                         "may be", path, number)


def watch(config: Config | Failgate, request: Watch) -> Iterator[str | Watched]:
    """Watch a report (``--batch``: ``batches.watch_batches``): yields lines to print as
    cases arrive, and last how it ended. A harness given is run in its own session and
    stopped as a whole however this ends."""
    from .sequential import ended, watched_gate

    app = Failgate.of(config)
    if request.replay and not request.report.is_file():
        raise FailgateError("no such report", request.report)
    feed = watched_gate(app, request)
    limit = app.read_spec().max_bytes
    if request.replay:
        try:
            for lines in batches(replayed(request.report, limit)):
                yield from feed.add_lines(lines, replayed_line)
                if feed.gate.settled is not None:
                    break
        except FailgateError:
            yield from feed.pending()  # the last case gated before the error
            raise
        yield from feed.pending()
        yield ended(feed, feed.cases_read)
        return
    harness: Harness | None
    with Harness(request.command) if request.command else nullcontext() as harness:
        follow = Follow(request.report, request, harness, limit)
        try:
            for raw, last in follow.lines():
                yield from feed.add_raw(raw, partial(followed_text, last=last))
                if feed.gate.settled is not None:
                    break
        except FailgateError:
            yield from feed.pending()
            raise
        yield from feed.pending()
        if follow.idle:
            yield (f"no new case in {request.report} for {request.idle_seconds:g} seconds "
                   "(--idle-seconds)" + (": the harness is stopped" if harness else ""))
    # what the run paid for: the cases its report holds once the harness is stopped (one
    # started and not written when it was stopped is not counted)
    yield ended(feed, follow.rest(feed.gate.planned))

