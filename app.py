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
from ragapp.ui.layout import build_ui  # noqa: E402

SIGN_IN_MESSAGE = "Sign in with the account your administrator gave you · 请用管理员分配的账号登录"


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = Settings()
    engine = build_engine(settings)
    threading.Thread(target=engine.warm_up, name="warm-up", daemon=True).start()
    # Accounts on: Gradio's login page asks, the engine checks (bcrypt, throttled) and every handler acts as
    # the signed-in user's role.
    auth = {"auth": engine.login, "auth_message": SIGN_IN_MESSAGE} if engine.accounts is not None else {}
    build_ui(engine).queue(default_concurrency_limit=4).launch(
        server_name=settings.ui.host,
        server_port=settings.ui.port,
        show_error=False,
        # Gradio's upload route itself refuses files over the ingest limit, before they are written to disk.
        max_file_size=f"{settings.ingest.max_file_mb:g}mb",
        **auth,  # type: ignore[arg-type]
    )


if __name__ == "__main__":
    main()
