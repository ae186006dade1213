"""Measuring the app: retrieval and answer evaluations, benchmarks, reranker training, routing evaluation.

Depends on ``ragapp``; ``ragapp`` never imports it. Every command is ``python -m ragbench.<module>``.
"""
