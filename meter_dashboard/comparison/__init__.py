"""P(A>B) comparisons of training runs: :mod:`.model` (bootstrap, decision, Noether's sample size),
:mod:`.view` (the /compare page), :mod:`.cli` (the ``compare`` and ``compare-size`` verbs)."""
