"""Panel parts every page shares: the page base (:mod:`.base`), number and list inputs
(:mod:`.inputs`), a column of inputs drawn as one model (:mod:`.form`), sections and URL links (:mod:`.sections`), the simulation panel
(:mod:`.simulation`), the one stylesheet (:mod:`.style`, ``dashboard.css``), the guarded upload
(:mod:`.upload`) and the meter gauge component (:mod:`.meter_gauge`).  No templates here:
components render the same in a notebook cell and inside a served page."""
