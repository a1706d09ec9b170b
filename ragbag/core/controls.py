"""Which characters make a terminal do something instead of showing them.

One list for the two places that keep them off the screen: the CLI's text output
(``ragbag.core.terminal``, which shows each as a visible escape) and strict JSON
(``ragbag.core.jsonout``, which writes each as ``\\uXXXX``), so the two cannot disagree.
"""

from __future__ import annotations

import unicodedata

# Bidi embeddings, overrides and isolates reorder the characters after them on screen, so
# ``invoice\u202efdp.exe`` reads as ``invoiceexe.pdf``. (The marks LRM, RLM and ALM only set the
# direction of neutral characters, as right-to-left text needs, and stay.)
BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))


def codes(keep: str = "") -> tuple[int, ...]:
    """The C0 controls, DEL, the C1 controls (U+0080–U+009F: one-character escape sequences on
    terminals that honour them) and the bidi controls, but those in ``keep``."""
    cc = (c for c in range(0x100) if unicodedata.category(chr(c)) == "Cc" and chr(c) not in keep)
    return (*cc, *BIDI)
