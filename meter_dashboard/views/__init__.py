"""Panel components (``pn.viewable.Viewer``) over the models.  No templates here:
components render the same in a notebook cell and inside a served page."""
