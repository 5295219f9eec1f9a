"""The pytest front end's words for the actions the core suggests (``core/base/advice.py``).

``pytest --failgate=reports --failgate-ceilings=c2.yaml --failgate-ratchet``: the
failgate options this run was given on the command line that the action needs (what
the ini file sets, pytest reads again), then the action's flag.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.base.advice import TAXONOMY_FILE, Advice
from ..options import BY_NAME

if TYPE_CHECKING:
    from ..commands.config import Config


def command(config: Config, action: str, taxonomy: str | None = None) -> str:
    """The pytest command line that runs ``action`` (``init``, ``ratchet``) on this gate
    (with the taxonomy file ``taxonomy`` instead of the one given, if any)."""
    parts = ["pytest"]
    for option, words in config.given_words(action):
        if taxonomy is not None and option.name == "taxonomy":
            continue
        parts += [f"{option.flag}={word}" for word in words] if words else [option.flag]
    if taxonomy is not None:
        parts.append(f"{BY_NAME['taxonomy'].flag}={taxonomy}")
    return " ".join([*parts, f"--failgate-{action}"])


def pytest_advice(config: Config) -> Advice:
    return Advice(init=f"`{command(config, 'init')}`", ratchet=f"`{command(config, 'ratchet')}`",
                  init_taxonomy=f"`{command(config, 'init', TAXONOMY_FILE)}`",
                  ceilings=f"`{BY_NAME['ceilings'].flag}=FILE` (or the ini key "
                  f"`{BY_NAME['ceilings'].dest}`)")
