"""What a written reason says, read one way by the gate and by the guard.

A reason is evidence: it lets a looser configuration through review (the guard) and an
accepted change of instrument through the gate. Both read it here, so a reason the gate
accepts is one the guard counts, and a reason of no words is refused by both.
"""

from __future__ import annotations

import unicodedata

# Letters of other scripts that look like Latin ones (after casefolding): Cyrillic and
# Greek lookalikes a reader cannot tell from the old reason's letters.
_LOOKALIKES = str.maketrans("авекмнорстухіјѕԁһӏԛԝүαβεζικνορτυχ",
                            "abekmhopctyxijsdhlqwyabezikvoptux")


def reason_words(text: str) -> str:
    """What a reason says, for telling a new reason from an old one: its letters and digits
    only, compatibility-normalised (NFKC: full-width, ligatures, superscripts), casefolded,
    Cyrillic and Greek lookalikes read as the Latin letters they show.

    So the old reason with a zero-width space, a soft hyphen or another invisible character
    (Unicode format, control and mark characters), a no-break space, other spacing or
    punctuation, another case or lookalike letters is the old reason: what a reviewer reads
    is the same text, and it does not excuse a new loosening. A reason whose words are
    empty says nothing.
    """
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return "".join(char for char in folded.translate(_LOOKALIKES)
                   if unicodedata.category(char)[0] in "LN")
