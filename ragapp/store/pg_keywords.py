"""Keyword search in PostgreSQL full text: the same interface as ``Bm25Index``, kept in the shared database.

Why: with several replicas, bm25s means one in-memory copy of the index per replica, each rebuilt from the whole
catalog whenever any replica writes (the follower polls the version and retokenizes everything: minutes at 1M
chunks, and every replica's memory grows with the corpus). Here the index is one table that every replica reads
and writes: no in-memory copy, nothing to rebuild when a replica starts, and ``rebuild`` is incremental (it
tokenizes only the chunks the table lacks or whose text changed, and drops the ones the catalog no longer has).
``version`` lives in the database too, so the first replica to catch up brings every replica up to date.

Terms are OUR tokens (``ragapp.store.tokenize``: jieba for Chinese, stemmed English), so PostgreSQL's parser and
dictionaries never see text (the 'simple' configuration's job, done here before PostgreSQL sees anything): a
tsvector is built from tokens with their positions, a query is an OR of the question's tokens, both with every
lexeme quoted, and they travel as bound parameters, never as SQL text. ``array_to_tsvector`` would be simpler but
drops positions: ``ts_rank`` then loses term frequency and ``ts_rank_cd`` scores 0.

Ranking: plain ``ts_rank`` has no IDF (a rare term weighs the same as a common one) and loses 0.10 nDCG@10 to
bm25s on SciFact. So by default each query term's ``ts_rank`` is weighted by its BM25 IDF, from document
frequencies kept in ``keyword_df`` as rows come and go: within 0.01 of bm25s (``python -m ragbench.keywords_pg``,
retired since: code at 16f3910). ``ts_rank_cd`` (cover density) ranked worse still (0.45) and slower; it is not offered.

What it gives up against bm25s: ``ts_rank``'s term frequency saturates after two or three occurrences (BM25's
``k1`` is gentler), length normalisation divides by 1 + log(length) instead of BM25's ``b`` against the mean
length, and scores are on another scale (0.01-1, not BM25's 1-30: a threshold set for BM25 scores does not carry
over). And speed: GIN finds the matching rows but does not prune by score, so every match is ranked, and a query
costs in proportion to how many chunks hold its terms (a SciFact question's terms are in a quarter of the chunks),
where bm25s scores a sparse matrix in memory. Drawing the matches from the question's rarer terms only (see
``search``) halves that at no measured loss; the rest stays linear in the corpus.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Self

from ragapp.core.chunks import index_text
from ragapp.core.errors import ConfigError
from ragapp.core.lifecycle import NotStartedError
from ragapp.core.types import DEFAULT_KB, Chunk
from ragapp.db import Database, Rows, Transaction
from ragapp.store.tokenize import TOKENIZER_VERSION, chunk_tokens, query_tokens

log = logging.getLogger(__name__)

# Only ever appended to (``Database.ensure_schema``). No foreign key to the catalog's chunks: their schema is
# the catalog's, and ``rebuild`` drops rows for chunks the catalog no longer passes. ``digest`` is a hash of the
# indexed text, so a chunk re-chunked or renamed under the same id is retokenized. ``keyword_df``: in how many
# rows each lexeme is, for IDF.
SCHEMA_STEPS = (
    """
CREATE TABLE keyword_terms (
    chunk_id TEXT PRIMARY KEY,
    kb TEXT NOT NULL,
    digest TEXT NOT NULL,
    terms tsvector NOT NULL
);
CREATE INDEX keyword_terms_terms ON keyword_terms USING GIN (terms);
CREATE INDEX keyword_terms_by_kb ON keyword_terms (kb);
CREATE TABLE keyword_df (term TEXT PRIMARY KEY, df BIGINT NOT NULL);
CREATE TABLE keyword_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)
""",
    # 2: each chunk's document, for document filters; rows from before take it from the chunk id.
    """
ALTER TABLE keyword_terms ADD COLUMN doc_id TEXT;
UPDATE keyword_terms SET doc_id = regexp_replace(chunk_id, '-[0-9]+$', '');
CREATE INDEX keyword_terms_by_doc ON keyword_terms (doc_id)
""",
)

LOCK = "keywords"  # rebuilds of two replicas must not interleave
BATCH = 2_000  # chunks tokenized and written per statement: bounded memory, few round trips
DF_FLUSH = 200_000  # document-frequency changes held in memory before they are written
MAX_LEXEME_BYTES = 2_046  # PostgreSQL refuses longer lexemes ("word is too long")
MAX_POSITIONS = 256  # PostgreSQL keeps at most 256 positions per lexeme ...
MAX_POSITION = 16_383  # ... and clamps larger positions to this one
MAX_LEXEME_TOTAL = 512 * 1024  # bytes: tsvectors hold at most 1 MiB of lexemes; a pathological chunk stops here
COMMON_SHARE = 0.05  # a term in more than this share of the chunks does not draw matches on its own (see search)
MAX_QUERY_TOKENS = 64  # a pasted essay as a question still makes a bounded query (its rarest terms are kept)

# Whitelisted ranking expressions, never built from input. ts_rank's normalisation flag 1 divides by
# 1 + log(length): on SciFact +0.017 nDCG@10 over none for plain ts_rank, +0.003 weighted by IDF.
RANKINGS = ("ts_rank_idf", "ts_rank", "ts_rank_log")
DEFAULT_RANKING = "ts_rank_idf"
_PLAIN = {"ts_rank": "ts_rank(terms, CAST(? AS tsquery), 0)", "ts_rank_log": "ts_rank(terms, CAST(? AS tsquery), 1)"}
_IDF_TERM = "ts_rank(terms, CAST(? AS tsquery), 1) * ?"  # one per query term, with that term's IDF

_SET_META = "INSERT INTO keyword_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
_INSERT = (
    "INSERT INTO keyword_terms (chunk_id, kb, digest, terms, doc_id) "
    "SELECT c, k, d, CAST(t AS tsvector), o FROM unnest(CAST(? AS text[]), CAST(? AS text[]), CAST(? AS text[]), "
    "CAST(? AS text[]), CAST(? AS text[])) AS u(c, k, d, t, o)"
)
_DELETE = "DELETE FROM keyword_terms WHERE chunk_id = ANY(CAST(? AS text[])) RETURNING tsvector_to_array(terms)"
_RETAG = (
    "UPDATE keyword_terms SET kb = u.k FROM unnest(CAST(? AS text[]), CAST(? AS text[])) AS u(c, k) "
    "WHERE keyword_terms.chunk_id = u.c"
)
_ADD_DF = (
    "INSERT INTO keyword_df (term, df) SELECT * FROM unnest(CAST(? AS text[]), CAST(? AS bigint[])) "
    "ON CONFLICT (term) DO UPDATE SET df = keyword_df.df + excluded.df"
)


def quote_lexeme(token: str) -> str:
    """``token`` as one quoted lexeme of tsvector/tsquery input: inside quotes ``&|!:*()`` and spaces are plain
    characters; a quote and a backslash are doubled."""
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def _usable(token: str) -> bool:
    # Tokens never hold NUL or are empty today; the checks keep a future tokenizer from breaking a statement.
    return bool(token) and "\x00" not in token and len(token.encode("utf-8")) <= MAX_LEXEME_BYTES


def lexemes(tokens: Sequence[str]) -> dict[str, list[int]]:
    """Each usable token of ``tokens`` with its 1-based positions, within PostgreSQL's limits."""
    positions: dict[str, list[int]] = {}
    size = 0
    for at, token in enumerate(tokens, start=1):
        if at > MAX_POSITION:
            break
        seen = positions.get(token)
        if seen is None:
            if not _usable(token) or size + len(token.encode("utf-8")) > MAX_LEXEME_TOTAL:
                continue
            size += len(token.encode("utf-8"))
            positions[token] = [at]
        elif len(seen) < MAX_POSITIONS:
            seen.append(at)
    return positions


def _literal(positions: Mapping[str, Sequence[int]]) -> str:
    return " ".join(f"{quote_lexeme(t)}:{','.join(map(str, p))}" for t, p in positions.items())


def tsvector_literal(tokens: Sequence[str]) -> str:
    """The tsvector input text of ``tokens`` in order: ``'tok':1,4 'other':2``."""
    return _literal(lexemes(tokens))


def tsquery_literal(tokens: Iterable[str]) -> str:
    """An OR query of the distinct usable ``tokens`` ("" when none is left)."""
    distinct = [t for t in dict.fromkeys(tokens) if _usable(t)][:MAX_QUERY_TOKENS]
    return " | ".join(quote_lexeme(t) for t in distinct)


def idf(df: int, n: int) -> float:
    """BM25's (Lucene's) inverse document frequency: always > 0, so every match scores > 0."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def digest_of(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def _batches(items: Sequence[str], size: int = BATCH) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def _meta(rows: Rows) -> dict[str, str]:
    return {str(key): str(value) for key, value in rows}


class PgKeywordIndex:
    """Keyword search over tables of the shared PostgreSQL database. Thread-safe (the database is); any number
    of objects, in any number of processes, on one database share one index."""

    def __init__(self, db: Database, *, ranking: str = DEFAULT_RANKING) -> None:
        if db.dialect != "postgres":
            raise ConfigError(f"PostgreSQL keyword search needs a PostgreSQL database, not {db.where}.")
        if ranking not in RANKINGS:
            raise ConfigError(f"Unknown keyword ranking {ranking!r}: choose one of {', '.join(RANKINGS)}.")
        self._database = db
        self._ranking = ranking
        self._started = False

    def start(self) -> Self:
        """Create or migrate the index's tables; a second call does nothing."""
        if not self._started:
            self._database.ensure_schema("keywords", SCHEMA_STEPS)
            self._started = True
        return self

    @property
    def _db(self) -> Database:
        if not self._started:
            raise NotStartedError(self)
        return self._database

    @property
    def version(self) -> int:
        """The catalog version indexed, read from the database each time (another replica may have rebuilt):
        -1 when nothing usable is there, or it was built by another tokenizer."""
        meta = _meta(self._db.query("SELECT key, value FROM keyword_meta"))
        if meta.get("tokenizer") != str(TOKENIZER_VERSION) or "version" not in meta:
            return -1
        return int(meta["version"])

    def count(self) -> int:
        row = self._db.one("SELECT count(*) FROM keyword_terms")
        return int(row[0]) if row else 0

    def rebuild(self, chunks: list[Chunk], version: int, kb_of: Mapping[str, str] | None = None) -> None:
        """Make the tables hold exactly ``chunks`` (the whole catalog), tagged with the catalog ``version``.

        Incremental: only chunks missing from the table, or whose indexed text changed, are tokenized; rows of
        chunks not passed are deleted; a chunk moved to another knowledge base is re-tagged in place. One
        transaction: searches see the old index until it commits, and a rebuild that fails leaves it whole.
        ``kb_of`` maps chunk ids to their knowledge base; chunks it does not name are in the default one.
        """
        wanted: dict[str, tuple[str, str, Chunk]] = {}
        for chunk in chunks:
            kb = (kb_of or {}).get(chunk.chunk_id, DEFAULT_KB)
            wanted[chunk.chunk_id] = (kb, digest_of(index_text(chunk)), chunk)
        with self._db.transaction() as tx:
            # A second replica waits here, then finds little or nothing left to do.
            tx.lock(LOCK)
            meta = _meta(tx.query("SELECT key, value FROM keyword_meta"))
            if meta.get("tokenizer") != str(TOKENIZER_VERSION):
                # Tokens of another tokenizer never match today's queries: start over.
                dropped = tx.execute("DELETE FROM keyword_terms")
                tx.execute("DELETE FROM keyword_df")
                if dropped:
                    log.info("keyword index: %d rows from tokenizer %s dropped", dropped, meta.get("tokenizer"))
            stored = {
                str(cid): (str(kb), str(digest))
                for cid, kb, digest in tx.query("SELECT chunk_id, kb, digest FROM keyword_terms")
            }
            stale = [cid for cid in stored if cid not in wanted]
            fresh, retag = [], []
            for cid, (kb, digest, _) in wanted.items():
                had = stored.get(cid)
                if had is None or had[1] != digest:
                    fresh.append(cid)
                elif had[0] != kb:
                    retag.append(cid)
            df: Counter[str] = Counter()
            # A changed chunk is deleted and written again: its old lexemes leave the frequencies first.
            for ids in _batches(stale + [cid for cid in fresh if cid in stored]):
                for (gone,) in tx.query(_DELETE, (ids,)):
                    df.subtract(gone)
            for ids in _batches(retag):
                tx.execute(_RETAG, (ids, [wanted[cid][0] for cid in ids]))
            for ids in _batches(fresh):
                self._write(tx, ids, wanted, df)
                if len(df) > DF_FLUSH:
                    self._flush(tx, df)
            self._flush(tx, df)
            tx.execute(_SET_META, ("tokenizer", str(TOKENIZER_VERSION)))
            tx.execute(_SET_META, ("chunks", str(len(wanted))))
            tx.execute(_SET_META, ("version", str(version)))
        log.info(
            "keyword index at version %d: %d chunks tokenized, %d removed, %d re-tagged, %d kept",
            version, len(fresh), len(stale), len(retag), len(wanted) - len(fresh) - len(retag),
        )  # fmt: skip

    @staticmethod
    def _write(tx: Transaction, ids: list[str], wanted: Mapping[str, tuple[str, str, Chunk]], df: Counter[str]) -> None:
        terms = []
        for cid in ids:
            found = lexemes(chunk_tokens(wanted[cid][2]))
            df.update(found.keys())
            terms.append(_literal(found))
        kbs, digests, docs = (
            [wanted[c][0] for c in ids],
            [wanted[c][1] for c in ids],
            [wanted[c][2].doc_id for c in ids],
        )
        tx.execute(_INSERT, (ids, kbs, digests, terms, docs))

    @staticmethod
    def _flush(tx: Transaction, df: Counter[str]) -> None:
        """Write the frequency changes in ``df`` and forget them; lexemes no row holds any more go."""
        changes = [(term, n) for term, n in df.items() if n]
        for start in range(0, len(changes), 10 * BATCH):
            part = changes[start : start + 10 * BATCH]
            tx.execute(_ADD_DF, ([t for t, _ in part], [n for _, n in part]))
        fallen = [term for term, n in changes if n < 0]
        for ids in _batches(fallen, 10 * BATCH):
            tx.execute("DELETE FROM keyword_df WHERE term = ANY(CAST(? AS text[])) AND df <= 0", (ids,))
        df.clear()

    def search(
        self, query: str, top_k: int, kbs: frozenset[str] | None = None, docs: frozenset[str] | None = None
    ) -> list[tuple[str, float]]:
        """(chunk_id, score) pairs with score > 0, best first; only chunks of the knowledge bases ``kbs`` and
        the documents ``docs`` (None: all of them), chosen in the same query that ranks them."""
        tokens = [t for t in dict.fromkeys(query_tokens(query)) if _usable(t)]
        if not tokens or top_k <= 0 or (kbs is not None and not kbs) or (docs is not None and not docs):
            return []
        rows = self._db.query(
            "SELECT d.term, d.df, m.value FROM keyword_df d, keyword_meta m "
            "WHERE m.key = 'chunks' AND d.term = ANY(CAST(? AS text[]))",
            (tokens,),
        )
        if not rows:  # no chunk holds any of the terms
            return []
        frequency = {str(term): int(df) for term, df, _ in rows}
        total = int(rows[0][2])
        weights = {term: idf(df, total) for term, df in frequency.items()}
        # The rarest terms first: those are the ones a too-long question keeps.
        known = sorted(weights, key=lambda t: -weights[t])[:MAX_QUERY_TOKENS]
        if self._ranking != DEFAULT_RANKING:  # the plain baselines rank every match, as ts_rank alone would
            return self._ranked(_PLAIN[self._ranking], [tsquery_literal(known)], known, (kbs, docs), top_k)
        rank = " + ".join([_IDF_TERM] * len(known))
        rank_args: list[object] = [x for t in known for x in (quote_lexeme(t), weights[t])]
        # Ranking every match is what costs; a chunk holding only the question's common terms (in over 5% of the
        # chunks, IDF < 3) ranks low anyway, so the matches are drawn from the rarer terms. All terms still
        # score. Same nDCG@10 and Recall@100 on SciFact, 2.2x faster. Too few such matches: all terms again.
        rarer = [t for t in known if frequency[t] <= COMMON_SHARE * total]
        hits = self._ranked(rank, rank_args, rarer, (kbs, docs), top_k) if rarer else []
        if len(hits) < top_k and len(rarer) < len(known):
            hits = self._ranked(rank, rank_args, known, (kbs, docs), top_k)
        return hits

    def _ranked(
        self,
        rank: str,
        rank_args: list[object],
        match: list[str],
        within: tuple[frozenset[str] | None, frozenset[str] | None],
        top_k: int,
    ) -> list[tuple[str, float]]:
        """The ``top_k`` best chunks by ``rank`` among those holding any of the terms ``match``, within (knowledge
        bases, documents)."""
        scope, scope_args = "", []
        for column, allowed in zip(("kb", "doc_id"), within, strict=True):
            if allowed is not None:
                scope += f" AND {column} = ANY(CAST(? AS text[]))"
                scope_args.append(sorted(allowed))
        # ``@@`` picks the matches through the GIN index; only they are ranked. chunk_id breaks ties, so equal
        # scores come back in the same order on every replica.
        hits = self._db.query(
            f"SELECT chunk_id, {rank} AS score FROM keyword_terms WHERE terms @@ CAST(? AS tsquery){scope} "
            "ORDER BY score DESC, chunk_id LIMIT ?",
            (*rank_args, tsquery_literal(match), *scope_args, top_k),
        )
        return [(str(cid), float(score)) for cid, score in hits if score > 0]
