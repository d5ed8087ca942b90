"""The validation suite behind ``rodsim validate``: benchmark specs, comparisons, the report.

A benchmark is a folder of ``validation/``: ``benchmark.yaml`` (the spec, ``spec.py``), the case
file(s) it runs through ``rodsim.run`` exactly as ``rodsim run`` does, and ``reference.json``
(every reference number with its source). ``measure.py`` turns a results file into the compared
numbers, ``compare.py`` does the error arithmetic, ``runner.py`` runs a benchmark and
``report.py`` prints the table and writes the Markdown report with its figures.
"""
