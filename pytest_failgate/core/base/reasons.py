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

# Unicode's Default_Ignorable_Code_Point property (DerivedCoreProperties.txt, Unicode 15.1;
# the standard library's ``unicodedata`` does not expose it), as inclusive ranges: the code
# points a renderer shows as nothing when it does not support them. Most are format,
# control or mark characters (not letters or digits anyway); the ones that matter here are
# the letters among them, the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), which
# ``unicodedata`` calls letters (Lo) and every font draws as blank space. The whole set is
# taken, not those four, so a filler a future attack finds is already no word.
DEFAULT_IGNORABLE: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)


def default_ignorable(char: str) -> bool:
    """Whether ``char`` is a default-ignorable code point (``DEFAULT_IGNORABLE``)."""
    point = ord(char)
    return any(low <= point <= high for low, high in DEFAULT_IGNORABLE)


def reason_words(text: str) -> str:
    """What a reason says, for telling a new reason from an old one: its letters and digits
    only, compatibility-normalised (NFKC: full-width, ligatures, superscripts), casefolded,
    Cyrillic and Greek lookalikes read as the Latin letters they show; a letter that renders
    as nothing (a default-ignorable code point: the Hangul fillers) is not a letter here.

    So the old reason with a zero-width space, a soft hyphen or another invisible character
    (Unicode format, control and mark characters), a no-break space, other spacing or
    punctuation, another case or lookalike letters is the old reason: what a reviewer reads
    is the same text, and it does not excuse a new loosening. A reason whose words are
    empty (only spaces, punctuation, fillers or invisible characters) says nothing.
    """
    # what renders as nothing goes first: a lone mark may fold into a letter (U+0345, the
    # combining ypogegrammeni, casefolds to iota)
    text = "".join(char for char in text if unicodedata.category(char)[0] not in "MCZ"
                   and not default_ignorable(char))
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return "".join(char for char in folded.translate(_LOOKALIKES)
                   if unicodedata.category(char)[0] in "LN" and not default_ignorable(char))
