"""A run against a baseline run: pairing cases, exact statistics, noise bands."""

from fractions import Fraction

# The level of the exact tests where the ceilings file sets no ``significance:``. Here,
# not in ``baseline``: a run without a baseline reads it without importing the pairing.
DEFAULT_ALPHA = Fraction(1, 20)
# and the noise model's name for the passed cases, read by a run without a noise file
PASSED_MODE = "correct"  # the gate's name for a case that passed (mode:correct)
