"""The Ladder leaderboard (Blum & Hardt): :mod:`.model` (Algorithms 1-2, Lemma 4 sizes, the boosting
attack), :mod:`.view` (the /ladder page), :mod:`.cli` (the ``ladder`` and ``ladder-size`` verbs)."""
