"""``python -m ragbench.bench``: ingestion throughput, query latency, memory and disk at growing corpus sizes."""
