"""Saved test cases and their scoring against the retrieval pipeline (the Traces tab's evaluation panel)."""
