"""The mathematics: pure numpy/scipy functions, one module per family of methods.

No Panel, no param, no files.  Every public function cites the paper and equation it
implements.
"""
