"""ragapp: a local-first RAG + agent knowledge assistant."""

__version__ = "0.1.0"
