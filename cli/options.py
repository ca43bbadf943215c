"""Option parsers the families' command lines share."""

from __future__ import annotations

import argparse

__all__ = ["comma_ints"]


def comma_ints(expected: str):
    """An argparse ``type``: ``"3,1,2"`` -> ``[3, 1, 2]``; anything else is refused in one
    line that says what was ``expected`` (``"integers (levels 0..lg n)"``)."""
    def parse(text: str) -> list[int]:
        try:
            return [int(x) for x in text.split(",")]
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated {expected}, got {text!r}") from None
    return parse
