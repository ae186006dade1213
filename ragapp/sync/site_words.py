"""What a website sync tells a person, as a code and its values (``Said``), with the English the logs, the command
line and the HTTP API show. The UI words the same codes in English and Chinese (``ragapp.ui.said_words``); a unit
test holds the two English texts equal."""

from __future__ import annotations

from ragapp.core.types import Said

# code: English, a str.format template over the values
SITE_WORDS: dict[str, str] = {
    # one page (a refusal)
    "web.status": "{url}: the server answered {status}; not read",
    "web.server_error": "{url}: the server answered {status}; kept as it was, tried again at the next sync",
    "web.timeout": "{url}: no complete answer within {seconds} s (RAGAPP_SYNC__WEB_REQUEST_TIMEOUT_S); kept as it "
    "was, tried again at the next sync",
    "web.too_big": "{url}: larger than {limit} MB (RAGAPP_SYNC__WEB_MAX_PAGE_MB); not read past that",
    "web.type": "{url}: of type {type}, which the app does not read; not read",
    "web.tls": "{url}: the secure connection failed ({detail}); check the site's certificate",
    "web.network": "{url}: could not be reached ({detail}); tried again at the next sync",
    "web.address": "{url}: {host} resolves to {address}, an address a website source may not reach (docs/security.md)",
    "web.off_site": "{url}: redirects to {target}, outside the followed site; not followed",
    "web.redirect_loop": "{url}: its redirects go round in a loop; not followed",
    "web.redirects": "{url}: more than {limit} redirects in a row; not followed",
    "web.noindex": "{url}: the page asks not to be indexed (robots noindex); not added",
    "web.robots": "{count} links robots.txt asks crawlers not to read (the first: {url}); not read",
    "web.too_deep": "{count} links more than {limit} clicks from the start (RAGAPP_SYNC__WEB_MAX_DEPTH); not "
    "followed (the first: {url})",
    "web.similar": "{shape}: more than {limit} pages with addresses of this one shape, as a program makes (a "
    "calendar's months, a search's pages); {count} more not followed (RAGAPP_SYNC__WEB_MAX_SIMILAR)",
    # the whole crawl, stopped early (pages not reached keep what they had)
    "web.page_limit": "stopped at {limit} pages (RAGAPP_SYNC__WEB_MAX_PAGES); pages not reached keep what they had",
    "web.byte_limit": "stopped after {limit} MB read (RAGAPP_SYNC__WEB_MAX_CRAWL_MB); pages not reached keep "
    "what they had",
    "web.time_budget": "stopped after {seconds} s spent on the site (RAGAPP_SYNC__WEB_CRAWL_TIMEOUT_S); pages not "
    "reached keep what they had",
    "web.error_storm": "stopped after {count} failed requests in a row (the last: {reason}); the site seems to be "
    "down, pages keep what they had, tried again at the next sync",
    # the whole crawl, failed
    "web.start": "the start page could not be read: {reason}",
    "web.robots_unreachable": "robots.txt could not be read ({reason}); the site is not crawled until it can be "
    "(RFC 9309)",
    "web.robots_start": "robots.txt asks crawlers not to read the start page {url}; nothing was read",
    "web.sitemap": "the sitemap {url} could not be read: {reason}",
}


def site_said(code: str, **values: str | int | float) -> tuple[str, Said]:
    """The English of ``code`` filled with ``values``, and the same as a ``Said``."""
    return SITE_WORDS[code].format(**values), Said(code, dict(values))


def caused_said(code: str, cause: Said, **values: str | int | float) -> tuple[str, Said]:
    """``site_said`` for a record another one made (a start page not read because of a timeout): that one's
    English is the ``reason`` value, and its code and values ride along (``cause``, ``cause_*``) for the UI
    to word it in its own languages."""
    english = SITE_WORDS[code].format(**values)
    carried = values | {"cause": cause.code} | {f"cause_{k}": v for k, v in cause.values.items()}
    return english, Said(code, dict(carried))
