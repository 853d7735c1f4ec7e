"""The Ladder view outside a server (issue 29): every section is built at once, none waits to be scrolled to."""
from __future__ import annotations

import meter_dashboard as md
import meter_dashboard.leaderboard.model as ml


def test_outside_a_server_the_sections_below_the_fold_are_built_at_once():
    view = md.Ladder()
    assert view.size_seen.built and view.attack_seen.built
    assert view.size_seen.holder.objects == [view.label_bound.__panel__()]
    assert view.attack_seen.holder.objects == [view.boosting.__panel__()]
    assert "ladder-labels" in view.label_bound.size_headlines.object
    default = ml.boosting_attack(4000, 400, seed=0, trials=5)
    assert view.attack.result.complete
    assert list(view.attack_source.data["naive"]) == list(default.naive_public)
