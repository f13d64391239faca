"""fastgl benchmarks: one script per question, run as ``python -m benchmarks.<name>``.

Shared pieces (environment record, timing, JSON results, tables) are in
:mod:`benchmarks.harness`; results of real runs are kept in ``benchmarks/results/``.
"""
