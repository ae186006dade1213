"""What spares an open page most of the frames it drew while nothing on it changed: a script and a style put in
the page's <head>, before its first script (``QuietPage``, an ASGI middleware the mount adds).

Gradio 6.31's status tracker (its js/statustracker/static/index.svelte) counts a pending event's seconds on every
animation frame, for each output of the event, hidden ones too, and never stops counting when a tracker is
removed while pending (its loop has no teardown): the page's own loading tracker is, so an idle page draws 60
frames a second for as long as it is open. In Chromium's headless shell that is 0.08–0.10 of a core for an idle
page, and with an answer pending, Gradio's pulsing border and spinner added, 0.23 (docs/lab-log.md, "An open
page's frames"); on a laptop the browser takes that from the model writing the answer. The script below lets
those counting callbacks run at most four times a second (the seconds shown then move by a quarter); every other
animation frame is the browser's as before (a spring of Gradio's loader that also outlives its loader still asks
for one each frame: docs/lab-log.md). Gradio has no setting for either, hence our own script; it must run
before Gradio's modules (the tracker keeps the function it found when loaded), and Gradio adds a Blocks' ``head``
after them, so the middleware writes it into the page as served.

A reader who asks the system for less motion (``prefers-reduced-motion: reduce``) gets none: Gradio's pulsing
border and spinner stand still, and transitions end at once. Gradio does not honour the preference itself.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

# The tracker's counting callback, as Gradio's build minifies it: ``()=>{F(Pe,(performance.now()-w(de))/1e3),W&&ze()}``
# (unminified: ``(performance.now() - timer_start) / 1000``). Nothing else on the page reads the clock that way.
# A JavaScript regular expression's source (the browser test that counts those frames keys on it too).
COUNTING = r"performance\.now\(\)\s*-[^;]*\)\s*\/\s*1(?:e3|000)\b"
_SCRIPT = (
    """<script>
(() => {
  const frame = window.requestAnimationFrame.bind(window);
  const counting = /"""
    + COUNTING
    + """/;
  const EVERY_MS = 250;
  window.requestAnimationFrame = (callback) => {
    let source = "";
    try { source = Function.prototype.toString.call(callback); } catch {}
    if (!counting.test(source)) return frame(callback);
    return setTimeout(() => frame(callback), EVERY_MS);
  };
})();
</script>"""
)

_STYLE = """<style>
@media (prefers-reduced-motion: reduce) {
  *, *::before, *::after {
    animation: none !important;
    transition: none !important;
    scroll-behavior: auto !important;
  }
}
</style>"""

_FIRST = (_SCRIPT + _STYLE).encode("utf-8")
_PAGE_MARK = b"window.gradio_config"  # in Gradio's page alone: our sign-in page and the API's docs are left as they are
_MOST_HELD = 8 * 1024 * 1024  # Gradio's page is a few hundred kB; a larger HTML response (a served file) goes on


class QuietPage:
    """ASGI middleware: puts the script and style above before the first script of Gradio's page (an HTML response
    to a GET that holds Gradio's config). Another HTML response is passed on as it was, held until whole only while
    under ``_MOST_HELD``; any other response goes on as it comes."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET":
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        parts: list[bytes] = []
        held = 0

        async def send_page(message: Message) -> None:
            nonlocal start, held
            if message["type"] == "http.response.start":
                kind = dict(message.get("headers", [])).get(b"content-type", b"")
                if kind.startswith(b"text/html"):
                    start = message  # held until the body is whole
                    return
            if start is None or message["type"] != "http.response.body":
                await send(message)
                return
            parts.append(message.get("body", b""))
            held += len(parts[-1])
            more = message.get("more_body", False)
            if more and held <= _MOST_HELD:
                return
            if more:  # too large to be the page: what was held, then the rest as it comes
                await send(start)
                await send({"type": "http.response.body", "body": b"".join(parts), "more_body": True})
                start = None
                return
            body = b"".join(parts)
            if _PAGE_MARK in body:
                body = body.replace(b"<script", _FIRST + b"<script", 1)
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(body)).encode("latin-1")))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, send_page)
