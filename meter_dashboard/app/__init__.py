"""The served dashboard: the page registry (:mod:`.registry`), the pages and their template
(:mod:`.pages`), each page's answer in its first response (:mod:`.first_answer`), the landing page and
/docs (:mod:`.documents`), Panel's write queue fixed (:mod:`.write_queue`) and the ``serve`` verb
(:mod:`.cli`)."""
