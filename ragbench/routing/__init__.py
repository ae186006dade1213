"""``python -m ragbench.routing``: intent routing measured on labelled questions."""
