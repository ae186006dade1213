"""Security headers on every response, whatever route (Gradio's page, its API, a file, an error) made it."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


# Gradio's page puts its config and start-up code in inline <script> tags and its theme in inline styles, so
# both need 'unsafe-inline'; its HTML component (gr.HTML: the language switch) compiles its template and its
# js_on_load with Function(), which needs 'unsafe-eval' (with inline scripts allowed already, that widens little).
# Nothing of the page comes from another host (the theme's fonts are local), so everything else is 'self' alone:
# a script injected anyway can send nothing elsewhere (connect-src, img-src) nor frame the app (frame-ancestors).
# data:/blob: are for uploaded-file previews and generated images; connect-src 'self' covers the queue's
# server-sent events. tests/e2e/test_security_headers_browser.py watches the page for violations.
def content_security_policy(frame_ancestors: str = "'self'") -> str:
    """The policy; ``frame_ancestors``: the pages that may show the app in a frame."""
    return "; ".join(
        (
            "default-src 'self'",
            "script-src 'self' 'unsafe-inline' 'unsafe-eval'",
            "style-src 'self' 'unsafe-inline'",
            "img-src 'self' data: blob:",
            "font-src 'self' data:",
            "media-src 'self' data: blob:",
            "connect-src 'self'",
            "worker-src 'self' blob:",
            "frame-src 'self'",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
            f"frame-ancestors {frame_ancestors}",
        )
    )


CONTENT_SECURITY_POLICY = content_security_policy()
STRICT_TRANSPORT_SECURITY = "max-age=31536000"

HEADERS: tuple[tuple[str, str], ...] = (
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=()"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    # Another site's page cannot embed the app's files (an uploaded image in an <img> tag, say).
    ("Cross-Origin-Resource-Policy", "same-origin"),
)


class SecurityHeaders:
    """ASGI middleware: adds the policy and ``HEADERS`` to each HTTP response (a header the app set itself is
    kept), and Strict-Transport-Security when ``https`` is on or the request came in over HTTPS (as a trusted
    proxy said). ``frame_ancestors``: who may frame the app (X-Frame-Options says the same when it is 'self')."""

    def __init__(self, app: ASGIApp, https: bool = False, frame_ancestors: str = "'self'") -> None:
        self.app = app
        self.https = https
        self.headers = [("Content-Security-Policy", content_security_policy(frame_ancestors)), *HEADERS]
        if frame_ancestors.strip() == "'self'":  # the older header cannot name other sites
            self.headers.append(("X-Frame-Options", "SAMEORIGIN"))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = list(self.headers)
        if self.https or scope.get("scheme") == "https":
            extra.append(("Strict-Transport-Security", STRICT_TRANSPORT_SECURITY))

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [
                    (name.lower().encode("latin-1"), value.encode("latin-1"))
                    for name, value in extra
                    if name.lower().encode("latin-1") not in present
                ]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
