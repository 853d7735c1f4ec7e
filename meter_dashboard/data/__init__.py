"""Example files shipped with meter-dashboard (read with ``importlib.resources``) and their
provenance notes (``*.md``).  The seeded scripts that generate the synthetic ones live
outside the package, in the repository's ``tests/generators/``
(``python -m tests.generators.generate_<name>``); a test checks that they reproduce
every shipped file byte for byte."""
