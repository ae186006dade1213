"""Composition root: settings -> engine -> UI -> serve. Everything else lives in the ragapp package."""

from __future__ import annotations

import logging
import os
import threading

from ragapp.config.space import detect_space, process_env_defaults

# On a Hugging Face Space: OpenMP's thread pools (torch's, llama.cpp's) sized to the Space's cores; they read the
# variables once, when first loaded, so before any of them is imported. Settings() applies the rest of a Space's
# defaults.
_space = detect_space(os.environ)
# Offline by default: nothing reaches for a model hub or sends telemetry unless the user opts in.
for _key, _value in {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "GRADIO_ANALYTICS_ENABLED": "False",
    "ANONYMIZED_TELEMETRY": "False",
    **(process_env_defaults(_space) if _space is not None else {}),
}.items():
    os.environ.setdefault(_key, _value)

from ragapp.config import Settings  # noqa: E402
from ragapp.core.errors import RagAppError  # noqa: E402
from ragapp.engine.build import build_engine  # noqa: E402
from ragapp.serve.server import build_app, serve  # noqa: E402

log = logging.getLogger("app")


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = Settings()
    if _space is not None:
        log.info(
            "on the Hugging Face Space %s: listening on %s:%d, state in %s%s, threads for %d CPU core(s)",
            _space.space_id,
            settings.ui.host,
            settings.ui.port,
            settings.paths.state_dir,
            " (lost on restart: no storage at /data)" if settings.paths.ephemeral else "",
            _space.cores,
        )
    try:
        engine = build_engine(settings)
        # The page (ragapp.ui) mounted on a FastAPI app with the security headers, expiring sign-ins and per-user
        # uploads (ragapp.serve); built before the models warm up, as its settings (a company sign-in's) are
        # checked then.
        app = build_app(engine)
    except RagAppError as exc:  # something to fix (a setting, llama.cpp built for another CPU): said, not traced
        log.error("%s", exc)
        raise SystemExit(2) from None
    engine.warming = True  # /readyz says "not ready" from the first request, not once the thread has begun
    threading.Thread(target=engine.warm_up, name="warm-up", daemon=True).start()
    serve(engine, app)  # by uvicorn


if __name__ == "__main__":
    main()
