"""PDFium is not thread-safe: every use of pypdfium2 (parsing, figures, page images) holds this one lock."""

from __future__ import annotations

import threading

PDFIUM_LOCK = threading.Lock()
