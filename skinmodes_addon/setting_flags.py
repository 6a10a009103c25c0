"""A setting's command-line flag, made one way for every subcommand (``bake``, ``prepare``, ``gait``).

Each :class:`core.settings.Setting` gives its own flag (``--wobble-hz``), kind, choices, description and
range; this reads the flag's text in that kind, so a subcommand never re-spells a setting.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from .core.settings import Setting

BOOLEANS = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False, "0": False}


def boolean(text: str) -> bool:
    """``--reset-at-cuts true`` (or yes/on/1, false/no/off/0)."""
    try:
        return BOOLEANS[text.strip().lower()]
    except KeyError:
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}") from None


# How each kind of setting's flag value is read (anything else is text).
PARSERS: dict[str, Callable[[str], Any]] = {"int": int, "float": float, "bool": boolean}


def add_setting_flag(parser: argparse.ArgumentParser, st: Setting) -> None:
    """Add ``st``'s flag to ``parser``: its value read in the setting's kind, enum ids in lower case, and its
    description and range as the help ("%" escaped for argparse)."""
    parser.add_argument(
        st.flag,
        dest=st.name,
        type=PARSERS.get(st.kind, str),
        choices=[c.id.lower() for c in st.choices] or None,
        help=f"{st.description} {st.range_text()}".replace("%", "%%"),
    )
