"""The sign-ins facet: what the served app needs to keep browsers signed in (``ragapp.serve.sessions`` puts it in
the place of Gradio's token map). The sign-ins live in the database (``ragapp.accounts.sessions``), so they
outlive a restart and hold on every replica; an admin lists and ends them through the ``admin`` facet."""

from __future__ import annotations

from ragapp.accounts.sessions import SessionStore


class SignIns:
    """``store``: where sign-ins are kept; None with accounts off (nobody signs in, every token is nobody's)."""

    def __init__(self, store: SessionStore | None) -> None:
        self._store = store

    def cookie_id(self) -> str | None:
        """The sign-in cookies' suffix, the same after restarts and on every replica; None with accounts off."""
        return self._store.cookie_id() if self._store is not None else None

    def begin(
        self,
        token: str,
        user: str,
        method: str = "password",
        client: str = "",
        agent: str = "",
        now: float | None = None,
    ) -> None:
        """Keep ``user`` signed in with ``token`` (Gradio's cookie), signed in by ``method`` from ``client``."""
        if self._store is not None:
            self._store.begin(token, user, method, client, agent, now)

    def user(self, token: str, now: float | None = None) -> str | None:
        """Whose sign-in ``token`` is (None: nobody's, ended or expired)."""
        return self._store.user(token, now) if self._store is not None and token else None

    def end(self, token: str) -> bool:
        """Sign this browser out."""
        return self._store.end(token) if self._store is not None else False

    def end_all(self, user: str) -> int:
        """Sign ``user`` out everywhere (Gradio's /logout does, unless asked for this browser only)."""
        return self._store.end_user(user) if self._store is not None else 0
