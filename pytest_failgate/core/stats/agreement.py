"""How far to trust the judge: its agreement with gold labels, in exact figures.

Every figure is computed from the labelled cases alone, each a pair (the judge's category,
the gold label's category), a passing case being its own class ``pass``:

- the **confusion matrix** ``M[j][g]``: labelled cases the judge put in ``j`` whose gold
  label says ``g``, over the taxonomy's categories and ``pass``;
- per class ``c``, the judge's **precision** ``M[c][c] / sum_g M[c][g]`` (of the labelled
  cases the judge put in ``c``, the share truly in it) and **recall**
  ``M[c][c] / sum_j M[j][c]`` (of the labelled cases truly in ``c``, the share the judge
  put in it), each an exact ``Fraction``, and **not applicable** (``None``, never 1 or 0:
  a rate over no case says nothing) when its denominator is 0;
- **Cohen's kappa** over every class, ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the share of
  labelled cases on the diagonal and ``p_e = sum_c r_c k_c / n**2`` (``r_c``, ``k_c`` the
  row and column totals): in integers, ``(n * agreed - E) / (n**2 - E)`` with
  ``E = sum_c r_c k_c``, a Fraction; not applicable when ``n**2 = E`` (judge and labels
  each put every case in one and the same class: chance agreement is certain).

**The intervals** are Clopper-Pearson's, at ``CONFIDENCE`` (two-sided, each figure on its
own). Why they are valid for the sample ``failgate sample`` draws: the run's cases are
draws from the population of cases the system is evaluated on, and a uniform sample of
them is a uniform sample of that population. Given how many labelled cases the judge put
in ``c`` (``n_c``), whether each truly is in ``c`` is an independent draw with probability
the judge's precision, so the hits are ``Binomial(n_c, precision)``, and Clopper-Pearson's
interval covers the precision with probability at least ``CONFIDENCE`` whatever it is
(conditionally on ``n_c``, so unconditionally); recall likewise, given the labelled cases
truly in ``c``. The bounds shown are found by bisection on exact binomial tails
(``intervals.exact_interval``); the trust word is decided exactly, on the tails themselves
at ``TRUST_LEVEL`` (``binomial.TailProbability.at_most``), not on the rounded bounds.

**The trust word** of a class: ``trusted`` when both its precision's and its recall's
lower bounds are at least ``TRUST_LEVEL``; ``untrusted`` when either's upper bound is below
it (the labels show the judge is worse than that); ``inconclusive`` otherwise (too few
labelled cases to tell, or a figure not applicable); ``not applicable`` when neither figure
is (no labelled case is in the class by the judge or by the labels).
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Literal

from ..base.classes import dataclass
from .binomial import binomial_upper_tail
from .intervals import exact_interval

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

PASS = "pass"  # the class of a case that passes, in the matrix beside the categories
CONFIDENCE = Fraction(95, 100)  # each interval's coverage, two-sided
TRUST_LEVEL = Fraction(9, 10)  # precision and recall a trusted judge is shown to reach
_STEPS = 24  # bisection steps of a displayed bound: to 2**-24, far below what is shown

Trust = Literal["trusted", "untrusted", "inconclusive", "not applicable"]


@dataclass(frozen=True)
class Share:
    """``hits`` of ``of`` labelled cases (``of > 0``), with its Clopper-Pearson interval."""

    hits: int
    of: int
    lower: float
    upper: float

    @property
    def value(self) -> Fraction:
        return Fraction(self.hits, self.of)

    def at_least(self, level: Fraction) -> bool:
        """Exactly: is the interval's lower bound at least ``level``?

        The lower bound ``p`` solves ``P[X >= hits | p] = (1 - CONFIDENCE) / 2``, a tail that
        rises with ``p``: the bound is at least ``level`` when the tail at ``level`` is at
        most that."""
        return self.hits > 0 and binomial_upper_tail(self.hits, self.of, level).at_most(
            (1 - CONFIDENCE) / 2)

    def below(self, level: Fraction) -> bool:
        """Exactly: is the interval's upper bound below ``level``? (``P[X <= hits | level]``
        under ``(1 - CONFIDENCE) / 2``, that is ``P[X >= hits + 1 | level]`` above one minus
        it.)"""
        return not binomial_upper_tail(self.hits + 1, self.of, level).at_most(
            1 - (1 - CONFIDENCE) / 2)


def share(hits: int, of: int) -> Share | None:
    """A share and its interval; ``None`` (not applicable) over no case."""
    if of == 0:
        return None
    lower, upper = exact_interval(hits, of, CONFIDENCE, steps=_STEPS)
    return Share(hits, of, lower, upper)


@dataclass(frozen=True)
class ClassAgreement:
    """One class's figures: the judge's precision and recall in it, and the trust word."""

    name: str
    judged: int  # labelled cases the judge put in it (its row's total)
    gold: int  # labelled cases truly in it (its column's total)
    agreed: int  # both
    precision: Share | None
    recall: Share | None
    trust: Trust


@dataclass(frozen=True)
class Agreement:
    """The judge against the gold labels of one report's labelled cases."""

    classes: tuple[str, ...]  # the matrix's rows and columns: categories, then ``pass``
    matrix: tuple[tuple[int, ...], ...]  # matrix[j][g]: judge says classes[j], gold classes[g]
    kappa: Fraction | None  # Cohen's; None: not applicable
    per_class: tuple[ClassAgreement, ...]

    @property
    def labelled(self) -> int:
        return sum(map(sum, self.matrix))

    @property
    def agreed(self) -> int:
        return sum(self.matrix[i][i] for i in range(len(self.classes)))


def trust(precision: Share | None, recall: Share | None,
          level: Fraction = TRUST_LEVEL) -> Trust:
    """The trust word of a class (module docstring), decided on exact tails."""
    if precision is None and recall is None:
        return "not applicable"
    if any(figure is not None and figure.below(level) for figure in (precision, recall)):
        return "untrusted"
    if precision is not None and recall is not None and precision.at_least(level) \
            and recall.at_least(level):
        return "trusted"
    return "inconclusive"


def kappa(matrix: Sequence[Sequence[int]]) -> Fraction | None:
    """Cohen's kappa of a square matrix of counts, exactly; None when not applicable."""
    n = sum(map(sum, matrix))
    agreed = sum(matrix[i][i] for i in range(len(matrix)))
    rows = [sum(row) for row in matrix]
    columns = [sum(column) for column in zip(*matrix, strict=True)]
    expected = sum(r * k for r, k in zip(rows, columns, strict=True))
    if n == 0 or n * n == expected:
        return None
    return Fraction(n * agreed - expected, n * n - expected)


def agreement(pairs: Iterable[tuple[str | None, str | None]], categories: Sequence[str],
              passing: str = PASS) -> Agreement:
    """The figures of labelled cases given as (judge's category, gold category) pairs, a
    passing case's being ``None``, over ``categories`` (the taxonomy's, in its order); the
    passing class is named ``passing``."""
    classes = (*categories, passing)
    if len(set(classes)) != len(classes):
        raise ValueError(f"the categories must be distinct and none named {passing!r}")
    index = {name: i for i, name in enumerate(categories)}
    size = len(classes)
    counts = [[0] * size for _ in range(size)]
    for judge, truth in pairs:
        counts[size - 1 if judge is None else index[judge]][
            size - 1 if truth is None else index[truth]] += 1
    per_class = []
    for i, name in enumerate(classes):
        judged = sum(counts[i])
        gold = sum(row[i] for row in counts)
        agreed = counts[i][i]
        precision, recall = share(agreed, judged), share(agreed, gold)
        per_class.append(ClassAgreement(name, judged, gold, agreed, precision, recall,
                                        trust(precision, recall)))
    matrix = tuple(tuple(row) for row in counts)
    return Agreement(classes, matrix, kappa(matrix), tuple(per_class))
