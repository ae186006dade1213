"""Training and measuring the shipped reranker (``ragapp/rerank/weights``) and tuning its blend weight."""
