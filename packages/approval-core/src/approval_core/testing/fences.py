"""What a model reads as a server's own words in a result's text: everything outside the stored-text fences."""

from __future__ import annotations

import re

__all__ = ["outside_fences", "unnumbered"]


def outside_fences(text: str) -> str:
    """``text`` with every fenced stretch (``⟦stored N⟧ ... ⟦/stored N⟧``, fences included) cut out.

    Fences are those :mod:`approval_core.serving.stored_text` draws, one nonce ``N`` (8 hex digits) per
    result; a stretch may span lines. A text without fences is returned as it is.

    Raises:
        AssertionError: the text holds fences of more than one nonce (one result has one marker).
    """
    nonces = set(re.findall(r"⟦stored ([0-9a-f]{8})⟧", text))
    assert len(nonces) <= 1, f"fences of {len(nonces)} nonces in one result: {sorted(nonces)}"
    for nonce in nonces:
        text = re.sub(f"⟦stored {nonce}⟧.*?⟦/stored {nonce}⟧", "", text, flags=re.S)
    return text


def unnumbered(text: str) -> str:
    """``text`` with each fence's nonce left out (``⟦stored⟧``, ``⟦/stored⟧``), to compare a message as a whole."""
    return re.sub(r"⟦(/?)stored [0-9a-f]{8}⟧", r"⟦\1stored⟧", text)
