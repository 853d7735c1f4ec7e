"""Decimal arithmetic for the meter's Hoeffding counts, where float64 cannot tell n from n - 1.

The engine (:mod:`meter_dashboard.bounds.meter`) solves ``sum_k 2 S_k exp(-2 n eps_k^2) <
delta`` in float64 and checks ``n`` and ``n - 1`` there.  When a term is huge (``log S`` of
order 1e5 for T = 100,000 and m = 100) the rounding of ``log S - 2 n eps^2`` can exceed the
change from n - 1 to n (``2 eps^2``); those counts are re-decided here with the tree sizes
of Thms 1-2 / Cor 1-2, Appendix B and Eqs. 13-16 written as exact decimal logarithms,
``eps_k`` taken as the exact binary value of its float (the float engine's input), and as
many digits as the magnitudes need.  Used only for the rare undecided counts.

References
----------
.. [1] F. A. Hubis, W. Wu, C. Zhang. "Quantitative Overfitting Management for
   Human-in-the-loop ML Application Development with ease.ml/meter", 2019.
"""
from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal, localcontext

__all__ = ["decimal_log_counts", "exact_count", "float_is_certain"]


def _lse(values: Sequence[Decimal | None]) -> Decimal | None:
    """``log sum exp`` of Decimals (``None`` stands for log 0)."""
    live = [v for v in values if v is not None]
    if not live:
        return None
    top = max(live)
    return top + sum(((v - top).exp() for v in live), Decimal(0)).ln()


def _log_comb(n: int, k: int) -> Decimal | None:
    """``ln C(n, k)`` as a sum of k logs (k small: at most the number of signals)."""
    if k < 0 or n < k:
        return None
    return sum(((Decimal(n - k + i) / Decimal(i)).ln() for i in range(1, k + 1)), Decimal(0)) if k else Decimal(0)


def _chains(steps: int, tenants: int, tenant_steps: Sequence[int] | None) -> list[int]:
    if tenant_steps is not None:
        return [int(v) for v in tenant_steps]
    base, extra = divmod(int(steps), int(tenants))
    return [base + (1 if i < extra else 0) for i in range(int(tenants))]


def decimal_log_counts(variant: str, m: int, steps: int, tenants: int = 1, tenant_steps: Sequence[int] | None = None,
                       reverts: Sequence[int] | None = None) -> list[Decimal | None]:
    """``ln S_k`` (k = 1..m) of Thms 1-2, Appendix B and Eqs. 13-16, as Decimals (or None for 0).

    Same conventions as ``meter.log_tree_sizes`` (reverts are global step numbers, each
    shifted within its tenant's chain), for one whole number of steps.
    """
    if variant == "single_model":
        return [Decimal(0)]
    if variant in ("no_adaptivity", "resampling"):
        return [Decimal(int(steps)).ln()]
    per_k: list[list[Decimal | None]] = [[] for _ in range(m)]
    start = 0
    ln_m = Decimal(m).ln()
    for length in _chains(steps, tenants, tenant_steps):
        mine = [r - start for r in (reverts or []) if start < r <= start + length]
        shifted = [r - i for i, r in enumerate(mine)]
        rest = length - len(mine)
        for k in range(1, m + 1):
            if variant == "regular":
                if rest == 0:
                    main = None
                elif m == 1:
                    main = Decimal(rest).ln()
                else:  # ln((m^rest - 1)/(m - 1)) without forming m^rest
                    main = rest * ln_m + (1 - (-rest * ln_m).exp()).ln() - Decimal(m - 1).ln()
                terms = [main] + [(s - 1) * ln_m for s in shifted]
            else:
                terms = [_log_comb(k + rest - 1, k)] + [_log_comb(k + s - 2, k - 1) for s in shifted]
            per_k[k - 1].append(_lse(terms))
        start += length
    return [_lse(v) for v in per_k]


def exact_count(log_counts: Sequence[Decimal | None], eps: Sequence[float], delta: float, guess: int) -> int:
    """Smallest n with ``sum_k 2 S_k exp(-2 n eps_k^2) < delta``, decided in Decimal near ``guess``.

    ``log_counts`` from :func:`decimal_log_counts`; ``eps`` floats (their exact binary
    values are used, as the float engine does).
    """
    digits = 30 + max(len(str(int(guess))), max((len(str(int(abs(v)))) for v in log_counts if v is not None),
                                                  default=1))
    with localcontext() as ctx:
        ctx.prec = digits
        ln2 = Decimal(2).ln()
        target = Decimal(delta)
        rates = [2 * Decimal(float(e)) ** 2 for e in eps]
        terms = [(lc + ln2, r) for lc, r in zip(log_counts, rates) if lc is not None]

        def ok(n: int) -> bool:
            return sum((a - r * n).exp() for a, r in terms) < target

        n = max(int(guess), 1)
        while not ok(n):
            n += 1
        while n > 1 and ok(n - 1):
            n -= 1
        return n


def float_is_certain(margin_n: float, margin_prev: float, scale: float) -> bool:
    """Whether float64 values of ``g(n) < 0 <= g(n - 1)`` are far enough from 0 to trust."""
    err = 16.0 * 2.0 ** -52 * scale + 1e-13
    return abs(margin_n) > err and abs(margin_prev) > err

