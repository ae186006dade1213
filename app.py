"""Composition root: settings -> engine -> UI -> serve. Everything else lives in the ragapp package."""

from __future__ import annotations

import logging
import os
import threading

# Offline by default: nothing reaches for a model hub or sends telemetry unless the user opts in.
for _key, _value in {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "GRADIO_ANALYTICS_ENABLED": "False",
    "ANONYMIZED_TELEMETRY": "False",
}.items():
    os.environ.setdefault(_key, _value)

from ragapp.config import Settings  # noqa: E402
from ragapp.engine.build import build_engine  # noqa: E402
from ragapp.serve.server import serve  # noqa: E402


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = Settings()
    engine = build_engine(settings)
    threading.Thread(target=engine.warm_up, name="warm-up", daemon=True).start()
    # The page (ragapp.ui) mounted on a FastAPI app with the security headers, expiring sign-ins and per-user
    # uploads (ragapp.serve), served by uvicorn.
    serve(engine)


if __name__ == "__main__":
    main()
