"""The served dashboard: the pages and their template (:mod:`.pages`), the per-session worker
threads (:mod:`.workers`) and the ``serve`` verb (:mod:`.cli`)."""
