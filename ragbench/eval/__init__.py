"""``python -m ragbench.eval``: retrieval quality on BEIR folders, and Workflow against Agent answering."""
