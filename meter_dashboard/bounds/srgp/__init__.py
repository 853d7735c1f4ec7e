"""Approving model modifications on a reused test set: Bonferroni and the SRGP family.

Feng, Pennello, Petrick, Sahiner, Pirracchio & Gossmann, "Sequential algorithmic
modification with test data reuse" (the paper, ``seeds/004``).  A developer proposes
modifications f_1, ..., f_T one after another; test j releases a single bit (approved or
not), so every possible history is a node of a binary tree with 2**T - 1 nodes, and the
family-wise error rate (FWER) of approving at least one unacceptable modification must
stay at or below ``alpha`` whatever path the (adaptive) developer takes.

Symbols (the paper's, mapped once): ``T`` = ``steps`` (the number of tests allowed);
``j``/``t`` = test index 1..T; ``w`` = node weight (share of alpha); ``g`` = edge weights
from an approved node to the streak of tests after it; ``c`` = significance level (the
p-value threshold) a test is held to; ``delta_j`` = ``margin`` of test j (Eq. 7).

The hypothesis tested at step j (Eq. 7, written for a per-example loss) is

    H_j : E[loss_0 - loss_j] <= delta_j      (modification j improves by at most delta_j)

tested with a one-sided z-test on the per-example improvements ``d_i = loss_0,i -
loss_j,i``: ``z_j = (mean(d) - delta_j) / (sd(d) / sqrt(n))`` and ``p_j = 1 - Phi(z_j)``;
the modification is approved when ``p_j <= c_j``.  After an approval the next margin is
``delta_{j+1} = delta_j + margin_step`` (Section 3.2 uses 0.01 on the AUC scale).

Procedures (``METHODS``; the paper's names in brackets):

``naive`` [BinaryThres]
    every test at level alpha: no multiplicity control (the cautionary baseline of 3.1).
``bonferroni`` [Bonferroni]
    every node of the tree at alpha / (2**T - 1).
``weighted-bonferroni`` [wBonferroni]
    Section 3: the nodes whose history has at most ``failure_threshold`` (3) denials
    share half of alpha equally, the others share the other half equally.  With
    T <= failure_threshold + 1 there are no "other" nodes and the first group gets all
    of alpha (our choice; the paper does not treat that case).
``bonf-srgp`` [bonfSRGP]
    Section 2.2 with Algorithm 1.  The start node carries weight 1 (treated as approved,
    our reading of Algorithm 1's initialisation).  After an approval of a node with
    weight w, the streak of tests that would follow it (until the next approval) gets
    w * g_1, w * g_2, ... with g_1 = s, g_i = s (1 - s)**(i - 1) and the last edge taking
    what is left, s = ``success_weight`` (0.8 in Section 3).  Level c = w * alpha.  With
    alpha = 0.1: 0.08, 0.016, 0.0032 after the start; 0.064 right after an approval at
    the first test.
``fs-srgp`` [fsSRGP]
    Section 2.3: the same node weights, but within a streak of failures the tests form a
    flexible fixed-sequence test.  The z-threshold b_j solves the simplified form of
    Eq. 4, ``P(Z_k <= b_k for the earlier failed tests k of the streak, Z_j > b_j) =
    w_j alpha`` with (Z_k, Z_j) standard normal with the correlations of the per-example
    improvements (estimated from the data, as in the paper); c_j = 1 - Phi(b_j) >= w_j
    alpha.  On approval the node's weight w (not c) is recycled per Eq. 1.
``pres-srgp`` [presSRGP]
    Section 2.4: the prespecified procedure's modifications are extra nodes that are
    never tested, approved nor reported.  Node t gets a critical value z_t (Eq. 5) and
    test j is held to b_j (Eq. 6) with ``P(xi_k < z_k for k <= j, Z_j > b_j) = w_j
    alpha``, where xi_k is the standardized error of the prespecified improvement k.
    The adaptive tree starts with weight ``1 - pres_share`` (then recycles like
    bonfSRGP); the prespecified nodes share ``pres_share`` (default 0.9): the first gets
    ``pres_first_share`` (0.5) of it, the others equal parts of the rest.  The paper
    leaves these weights to the developer; the defaults are our choice.

Choices where the paper is silent or ambiguous (documented here and on the page):

* Sign convention of Eqs. 5-6.  We write every statistic so that *large* means "better
  than the margin", and a prespecified node's confidence region is ``xi_k < z_k`` (its
  improvement is not overestimated by more than z_k standard errors).  This is the
  orientation in which correlation between adaptive and prespecified modifications buys
  power, which is the point of Section 2.4.
* Conditioning sets.  The thresholds condition on at most ``max_conditioning`` earlier
  nodes (default 6), picked deterministically as those most likely to exclude a large
  Z_j (smallest ``(b_k - r_kj b) / sqrt(1 - r_kj**2)`` at the Bonferroni threshold b).
  Conditioning on fewer nodes never raises the error rate: the error of a streak is
  ``sum_j P(first rejection at j) <= sum_j P(Z_K <= b_K, Z_j > b_j)`` for *any* subset
  K of the earlier nodes, so every threshold still spends at most its w_j alpha.  The
  same union bound shows the simplified form of Eq. 4 keeps the streak's error at
  ``sum_j w_j alpha`` whatever the sign of the correlations.
* Multivariate normal probabilities (:mod:`.normal`).  One dimension in closed form, two
  by a deterministic one-dimensional integral in log space (accurate to tiny tails).
  From three dimensions on, Genz's separation of variables on a randomly shifted lattice
  (randomized quasi-Monte Carlo); the shifts are seeded (``seed``) so results are
  reproducible, and agree with independent integrations to a few 1e-4 on the z scale.
  The integration points, variable order and Cholesky factor are prepared once per root
  find, and solved thresholds are cached by their exact inputs (:mod:`.thresholds`).
* A column whose improvements have zero variance has no z-statistic: it is approved when
  its (exact) improvement exceeds the margin and denied otherwise, and it is treated as
  uncorrelated with the other columns.

Modules: :mod:`.levels` (names, the paper's defaults, Bonferroni-type weights),
:mod:`.normal` (normal probabilities), :mod:`.thresholds` (Eqs. 4-6 root finds),
:mod:`.procedures` (Algorithm 1), :mod:`.simulation` (Section 3).  Everything public is
re-exported here.

References
----------
.. [1] J. Feng, G. Pennello, N. Petrick, B. Sahiner, R. Pirracchio, A. Gossmann.
   "Sequential algorithmic modification with test data reuse", UAI 2022.
   Section 2 (Algorithm 1, Eqs. 1-2), 2.2, 2.3 (Eq. 4), 2.4 (Eqs. 5-6), 3 (Eq. 7, the
   0.8 edge weights, wBonferroni), 3.1 and 3.2 (the simulations).
.. [2] F. Bretz, W. Maurer, W. Brannath, M. Posch. "A graphical approach to sequentially
   rejective multiple test procedures", Stat. Med. 28(4), 2009.
"""
from __future__ import annotations

from . import levels, procedures, simulation, thresholds
from .levels import *
from .procedures import *
from .simulation import *
from .thresholds import *

__all__ = [*levels.__all__, *thresholds.__all__, *procedures.__all__, *simulation.__all__]
