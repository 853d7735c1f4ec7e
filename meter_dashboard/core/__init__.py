"""Panel-free parts every family shares: input validation (:mod:`.validation`), reading files within
limits (:mod:`.files`, :mod:`.tables`), number formatting (:mod:`.formatting`), colours
(:mod:`.colors`), the meter's Bokeh gauge (:mod:`.gauge`), the HTML report builder (:mod:`.report`),
work off the event loop (:mod:`.runtime`), plain words and slides (:mod:`.plain`, :mod:`.slide`),
server settings (:mod:`.serving`) and the
CLI's shared helpers (:mod:`.cli`).  Nothing here imports Panel."""
