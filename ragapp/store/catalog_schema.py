"""The catalog's tables: on SQLite created (and old files migrated) on open, as always; on PostgreSQL by
numbered schema steps (``Database.ensure_schema``), which replicas starting together apply once.

``kb_versions`` counts the changes to each knowledge base's documents (added, replaced, deleted, renamed, moved in
or out, re-tagged, their metadata set), so what was derived from one knowledge base (a kept answer) is thrown away
when that one changes and kept when another does. Triggers keep it, not the Python write paths: every statement
that touches ``documents``, ``document_tags`` or ``document_meta`` bumps its knowledge base's count in the same
transaction, on either engine, whoever wrote it. Chunks are left out: they are only ever written with their
document row (one bump per document, not one per chunk). A count never goes back (rows are never deleted), so a
knowledge base deleted and made again never meets an old count.
"""

from __future__ import annotations

from ragapp.core.types import DEFAULT_KB
from ragapp.db import Database, SqliteDatabase

_SQLITE_SCHEMA = """
PRAGMA foreign_keys = ON;
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    file_type TEXT NOT NULL,
    content_hash TEXT NOT NULL UNIQUE,
    size_bytes INTEGER NOT NULL,
    pages INTEGER,
    chunk_count INTEGER NOT NULL,
    added_at TEXT NOT NULL,
    kb TEXT NOT NULL DEFAULT 'default'
);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    text TEXT NOT NULL,
    page INTEGER,
    heading TEXT,
    ocr_confidence REAL,
    has_table INTEGER NOT NULL DEFAULT 0,
    figure TEXT
);
CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks(doc_id, ordinal);
CREATE TABLE IF NOT EXISTS skipped_sections (
    doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    page INTEGER,
    heading TEXT,
    reason TEXT NOT NULL,
    preview TEXT NOT NULL,
    PRIMARY KEY (doc_id, ordinal)
);
CREATE TABLE IF NOT EXISTS parse_reports (
    doc_id TEXT PRIMARY KEY REFERENCES documents(doc_id) ON DELETE CASCADE,
    report TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ocr_boxes (
    doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    page INTEGER NOT NULL,
    text TEXT NOT NULL,
    x0 REAL NOT NULL, y0 REAL NOT NULL, x1 REAL NOT NULL, y1 REAL NOT NULL,
    line INTEGER
);
CREATE INDEX IF NOT EXISTS ocr_boxes_by_page ON ocr_boxes(doc_id, page);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS document_meta (
    doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (doc_id, key)
);
CREATE INDEX IF NOT EXISTS document_meta_by_key ON document_meta(key, value);
CREATE TABLE IF NOT EXISTS document_tags (
    doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    PRIMARY KEY (doc_id, tag)
);
CREATE INDEX IF NOT EXISTS document_tags_by_tag ON document_tags(tag);
CREATE TABLE IF NOT EXISTS written_questions (
    chunk_id TEXT NOT NULL REFERENCES chunks(chunk_id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    lang TEXT NOT NULL,
    text TEXT NOT NULL,
    score REAL,
    kept INTEGER NOT NULL,
    PRIMARY KEY (chunk_id, ordinal)
);
CREATE TABLE IF NOT EXISTS question_runs (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(chunk_id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    written_at TEXT NOT NULL
);
"""
# Run after the migrations, since older catalogs lack the columns they index.
_SQLITE_INDEXES = """
CREATE INDEX IF NOT EXISTS documents_by_kb ON documents(kb, name);
CREATE TABLE IF NOT EXISTS kb_versions (kb TEXT PRIMARY KEY, version INTEGER NOT NULL);
"""

# Bump the count of knowledge base ``{kb}``: the first change makes its row, at 1 (concurrent writers never lose
# a bump: the upsert adds to the row in place).
_SQLITE_BUMP = (
    "INSERT INTO kb_versions (kb, version) {select} ON CONFLICT (kb) DO UPDATE SET version = kb_versions.version + 1;"
)
# Each has ``;`` inside its body, so each runs on its own (``statements`` would split it).
_SQLITE_TRIGGERS = [
    f"CREATE TRIGGER IF NOT EXISTS documents_kb_{event.lower()} AFTER {event} ON documents BEGIN {body} END"
    for event, body in (
        ("INSERT", _SQLITE_BUMP.format(select="VALUES (NEW.kb, 1)")),
        ("DELETE", _SQLITE_BUMP.format(select="VALUES (OLD.kb, 1)")),
        (  # a rename, or a move: both knowledge bases (once when it stays in one)
            "UPDATE",
            _SQLITE_BUMP.format(select="VALUES (OLD.kb, 1)")
            + _SQLITE_BUMP.format(select="SELECT NEW.kb, 1 WHERE NEW.kb <> OLD.kb"),
        ),
    )
] + [
    # A deleted document's tags and metadata go by cascade after it: its knowledge base is found no more, and the
    # document's own trigger has bumped it already.
    f"CREATE TRIGGER IF NOT EXISTS {table}_kb_{event.lower()} AFTER {event} ON {table} BEGIN "
    + _SQLITE_BUMP.format(select=f"SELECT kb, 1 FROM documents WHERE doc_id = {row}.doc_id")
    + " END"
    for table in ("document_tags", "document_meta")
    for event, row in (("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD"))
]

# PostgreSQL's steps, only ever appended to. Sorted text columns use the "C" collation: code-point order, as
# SQLite sorts, whatever locale the server was created with.
_POSTGRES_STEPS = (
    """
CREATE TABLE documents (
    doc_id TEXT COLLATE "C" PRIMARY KEY,
    name TEXT COLLATE "C" NOT NULL,
    file_type TEXT NOT NULL,
    content_hash TEXT NOT NULL UNIQUE,
    size_bytes BIGINT NOT NULL,
    pages BIGINT,
    chunk_count BIGINT NOT NULL,
    added_at TEXT COLLATE "C" NOT NULL,
    kb TEXT COLLATE "C" NOT NULL DEFAULT 'default'
);
CREATE TABLE chunks (
    chunk_id TEXT PRIMARY KEY,
    doc_id TEXT COLLATE "C" NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    ordinal BIGINT NOT NULL,
    text TEXT NOT NULL,
    page BIGINT,
    heading TEXT,
    ocr_confidence DOUBLE PRECISION,
    has_table BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX chunks_by_doc ON chunks(doc_id, ordinal);
CREATE TABLE skipped_sections (
    doc_id TEXT COLLATE "C" NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    ordinal BIGINT NOT NULL,
    page BIGINT,
    heading TEXT,
    reason TEXT NOT NULL,
    preview TEXT NOT NULL,
    PRIMARY KEY (doc_id, ordinal)
);
CREATE TABLE parse_reports (
    doc_id TEXT COLLATE "C" PRIMARY KEY REFERENCES documents(doc_id) ON DELETE CASCADE,
    report TEXT NOT NULL
);
CREATE TABLE ocr_boxes (
    doc_id TEXT COLLATE "C" NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    page BIGINT NOT NULL,
    text TEXT NOT NULL,
    x0 DOUBLE PRECISION NOT NULL, y0 DOUBLE PRECISION NOT NULL,
    x1 DOUBLE PRECISION NOT NULL, y1 DOUBLE PRECISION NOT NULL,
    line BIGINT NOT NULL
);
CREATE INDEX ocr_boxes_by_page ON ocr_boxes(doc_id, page);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE INDEX documents_by_kb ON documents(kb, name)
""",
    # 2: what each document says about itself and where it came from (``document_meta``), and users' tags.
    """
CREATE TABLE document_meta (
    doc_id TEXT COLLATE "C" NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    key TEXT COLLATE "C" NOT NULL,
    value TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (doc_id, key)
);
CREATE INDEX document_meta_by_key ON document_meta(key, value);
CREATE TABLE document_tags (
    doc_id TEXT COLLATE "C" NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    tag TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (doc_id, tag)
);
CREATE INDEX document_tags_by_tag ON document_tags(tag)
""",
    # 3: each knowledge base's count of changes (see the module), kept by triggers. The knowledge bases a
    # statement touches are bumped in name order, so two writers touching the same two never wait on each other
    # in a circle.
    """
CREATE TABLE kb_versions (kb TEXT COLLATE "C" PRIMARY KEY, version BIGINT NOT NULL);
CREATE FUNCTION catalog_bump_kbs(touched TEXT[]) RETURNS void LANGUAGE sql AS $$
INSERT INTO kb_versions (kb, version)
SELECT DISTINCT k COLLATE "C", 1 FROM unnest(touched) AS k WHERE k IS NOT NULL ORDER BY 1
ON CONFLICT (kb) DO UPDATE SET version = kb_versions.version + 1
$$;
CREATE FUNCTION documents_kb_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN PERFORM catalog_bump_kbs(ARRAY[NEW.kb]);
    ELSIF TG_OP = 'DELETE' THEN PERFORM catalog_bump_kbs(ARRAY[OLD.kb]);
    ELSE PERFORM catalog_bump_kbs(ARRAY[OLD.kb, NEW.kb]);
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER documents_kb AFTER INSERT OR UPDATE OR DELETE ON documents
FOR EACH ROW EXECUTE FUNCTION documents_kb_changed();
CREATE FUNCTION document_rows_kb_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM catalog_bump_kbs(ARRAY(SELECT kb FROM documents WHERE doc_id = OLD.doc_id));
    ELSE
        PERFORM catalog_bump_kbs(ARRAY(SELECT kb FROM documents WHERE doc_id = NEW.doc_id));
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER document_tags_kb AFTER INSERT OR UPDATE OR DELETE ON document_tags
FOR EACH ROW EXECUTE FUNCTION document_rows_kb_changed();
CREATE TRIGGER document_meta_kb AFTER INSERT OR UPDATE OR DELETE ON document_meta
FOR EACH ROW EXECUTE FUNCTION document_rows_kb_changed()
""",
    # 4: a figure's chunk says where the figure is on its page and its caption (JSON; ``ragapp.store.catalog``).
    "ALTER TABLE chunks ADD COLUMN figure TEXT",
    # 5: the questions the model wrote for each chunk (``ragapp.store.written_questions``), kept or dropped by the
    # grounding check, and which chunks it has written for; both go with their chunk.
    """
CREATE TABLE written_questions (
    chunk_id TEXT NOT NULL REFERENCES chunks(chunk_id) ON DELETE CASCADE,
    ordinal BIGINT NOT NULL,
    lang TEXT NOT NULL,
    text TEXT NOT NULL,
    score DOUBLE PRECISION,
    kept BIGINT NOT NULL,
    PRIMARY KEY (chunk_id, ordinal)
);
CREATE TABLE question_runs (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(chunk_id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    written_at TEXT NOT NULL
)
""",
)


def prepare(db: Database) -> None:
    """Create the catalog's tables in ``db``, or bring older ones up to date."""
    if isinstance(db, SqliteDatabase):
        db.script(_SQLITE_SCHEMA)
        _migrate_sqlite(db)
        db.script(_SQLITE_INDEXES)
        for trigger in _SQLITE_TRIGGERS:
            db.execute(trigger)
    else:
        db.ensure_schema("catalog", _POSTGRES_STEPS)


def _migrate_sqlite(db: SqliteDatabase) -> None:
    """Bring a catalog file from an older release up to date (SQLite only: PostgreSQL started at the present)."""
    conn = db.connection
    with db.transaction():  # holds the database's lock: no other thread uses the connection meanwhile
        columns = {row[1] for row in conn.execute("PRAGMA table_info(documents)")}
        if "kb" not in columns:  # a catalog from before knowledge bases: its documents go to the default one
            conn.execute(f"ALTER TABLE documents ADD COLUMN kb TEXT NOT NULL DEFAULT '{DEFAULT_KB}'")
        chunk_columns = {row[1] for row in conn.execute("PRAGMA table_info(chunks)")}
        if "ocr_confidence" not in chunk_columns:  # from before OCR and tables: no chunk was either
            conn.execute("ALTER TABLE chunks ADD COLUMN ocr_confidence REAL")
            conn.execute("ALTER TABLE chunks ADD COLUMN has_table INTEGER NOT NULL DEFAULT 0")
        if "figure" not in chunk_columns:  # from before figures were passages: no chunk was one
            conn.execute("ALTER TABLE chunks ADD COLUMN figure TEXT")
        box_columns = {row[1] for row in conn.execute("PRAGMA table_info(ocr_boxes)")}
        if "line" not in box_columns:  # boxes were read back in rowid order; ``line`` keeps it, on either engine
            conn.execute("ALTER TABLE ocr_boxes ADD COLUMN line INTEGER")
            conn.execute("UPDATE ocr_boxes SET line = rowid")
