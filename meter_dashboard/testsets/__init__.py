"""Guarded test sets: the services layer (ease.ml/meter and ease.ml/ci run for real).

A guarded test set *holds* its labels: developers submit predictions and get back a
signal (the meter's colour, or pass/fail), never the test score; the service counts the
steps, enforces the planned budget, retires the test set when it is used up and raises
the new-test-set alarm.  The layers:

- :mod:`.store` - the one store module (SQLAlchemy 2 Core; SQLite by default, PostgreSQL
  for teams), transactions and row locks;
- :mod:`.security` - tokens (random, shown once, stored as SHA-256 digests);
- :mod:`.access` - who may see what: the one rule every answer goes through;
- :mod:`.files` - ``id,label`` and ``id,prediction`` files and matching by id;
- :mod:`.submission` - request bodies read within explicit limits (bytes, lines, JSON depth);
- :mod:`.signals` - the answers, computed with the models' own public code;  :mod:`.alarms` - alarms
  and notes (``level``);
- :mod:`.service` - create / token / submit / status / revert / retire / export / list;
- :mod:`.api` - the HTTP handlers served beside the pages;  :mod:`.openapi` - their contract;
  :mod:`.client` - the remote client;
- :mod:`.notebook` - ``md.TestSet`` and ``md.connect``;  :mod:`.overview` - the /testsets page model;
- :mod:`.view` - the /testsets page;  :mod:`.cli` - the ``testset`` verbs.

Everything but :mod:`.view` is Panel-free.
"""
