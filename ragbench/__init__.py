"""Measuring the app: retrieval and answer evaluations, benchmarks, reranker training, routing evaluation.

Depends on ``ragapp``; ``ragapp`` never imports it. Every command is ``python -m ragbench.<module>``.

Every measurement here measures the pipeline, so the answer cache is off unless the environment turns it on
(``RAGAPP_ANSWER_CACHE__ENABLED=true``, to measure a repeated question): the state folders are reused from run to
run, and a kept answer would otherwise answer every question asked before, unseen.
"""

import os

os.environ.setdefault("RAGAPP_ANSWER_CACHE__ENABLED", "false")
