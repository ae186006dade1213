"""Another ragapp as a retrieval channel (knowledge adapters: whoever retrieves sits behind one interface, so
another app's search is one more channel). ``RemoteChannel`` asks the other app's ``POST /v1/retrieve`` and returns
the passages its own gate kept, each carrying its text (they are in no local catalog) under a namespaced id
(``<name>:<chunk id>``) and cited as "<name> · <document>". It runs beside the vector and keyword channels, with
their time budget (``channel_timeout_s``): an app that is down or slow costs its passages and says so in the
answer's notice, never the answer. It searches only when no knowledge base is picked (the picked names are this
app's) and no document filter is set (a filter is resolved into this app's documents; the other app's are not among
them).
"""

from __future__ import annotations

import httpx

from ragapp.config.answering import RemoteSource
from ragapp.core.types import REMOTE_PREFIX, ChannelHit, Chunk, Docs, Scope
from ragapp.retrieval.channels import Channel


class RemoteChannel(Channel):
    def __init__(self, source: RemoteSource, timeout_s: float) -> None:
        self.name = REMOTE_PREFIX + source.name
        self._source = source
        key = source.api_key.get_secret_value() if source.api_key is not None else ""
        self._client = httpx.Client(
            base_url=source.url.rstrip("/"),
            headers={"Authorization": f"Bearer {key}"} if key else {},
            timeout=timeout_s,
        )

    def _retrieve(self, query: str, top_k: int, kbs: Scope, docs: Docs = None) -> list[ChannelHit]:
        if kbs is not None or docs is not None:  # the user picked this app's knowledge bases, or documents
            return []
        reply = self._client.post("/v1/retrieve", json={"query": query})
        reply.raise_for_status()  # a refusal (a wrong key) is this channel's failure, said in the notice
        hits = []
        for rank, passage in enumerate(reply.json()["chunks"][:top_k], start=1):
            chunk_id = f"{self._source.name}:{passage['chunk_id']}"
            chunk = Chunk(
                chunk_id, f"{self._source.name}:{passage['doc_id']}", 0, str(passage["text"]),
                f"{self._source.name} · {passage['document']}", heading=passage.get("location") or None,
            )  # fmt: skip
            score = passage.get("rerank_score")
            hits.append(
                ChannelHit(chunk_id, rank, float(score if score is not None else passage["fused_score"]), chunk=chunk)
            )
        return hits

    def close(self) -> None:
        self._client.close()
