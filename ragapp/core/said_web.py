"""What a website source's sync says (``ragapp.sync``): a page refused, a crawl stopped early or failed. A record
made because of another (a start page not read because of a timeout) carries that one as ``cause`` and its
``cause_*`` values, and is worded with that one's words as its ``reason`` (``ragapp.core.said``)."""

from __future__ import annotations

# code: (English, Chinese), each a str.format template over the record's values
WEB: dict[str, tuple[str, str]] = {
    "web.status": ("{url}: the server answered {status}; not read", "{url}：服务器返回 {status}；未读取"),
    "web.server_error": (
        "{url}: the server answered {status}; kept as it was, tried again at the next sync",
        "{url}：服务器返回 {status}；保留原有内容，下次同步时重试",
    ),
    "web.timeout": (
        "{url}: no complete answer within {seconds} s (RAGAPP_SYNC__WEB_REQUEST_TIMEOUT_S); kept as it was, tried "
        "again at the next sync",
        "{url}：{seconds} 秒内没有得到完整的回应（RAGAPP_SYNC__WEB_REQUEST_TIMEOUT_S）；保留原有内容，下次同步时重试",
    ),
    "web.too_big": (
        "{url}: larger than {limit} MB (RAGAPP_SYNC__WEB_MAX_PAGE_MB); not read past that",
        "{url}：大于 {limit} MB（RAGAPP_SYNC__WEB_MAX_PAGE_MB）；超出部分未读取",
    ),
    "web.type": (
        "{url}: of type {type}, which the app does not read; not read",
        "{url}：类型为 {type}，本应用不读取此类型；未读取",
    ),
    "web.tls": (
        "{url}: the secure connection failed ({detail}); check the site's certificate",
        "{url}：安全连接失败（{detail}）；请检查该网站的证书",
    ),
    "web.network": (
        "{url}: could not be reached ({detail}); tried again at the next sync",
        "{url}：无法访问（{detail}）；下次同步时重试",
    ),
    "web.address": (
        "{url}: {host} resolves to {address}, an address a website source may not reach (docs/security.md)",
        "{url}：{host} 解析为 {address}，网站同步源不得访问该地址（见 docs/security.md）",
    ),
    "web.off_site": (
        "{url}: redirects to {target}, outside the followed site; not followed",
        "{url}：重定向到 {target}，在所跟随的网站之外；未跟随",
    ),
    "web.redirect_loop": ("{url}: its redirects go round in a loop; not followed", "{url}：重定向形成循环；未跟随"),
    "web.redirects": (
        "{url}: more than {limit} redirects in a row; not followed",
        "{url}：连续重定向超过 {limit} 次；未跟随",
    ),
    "web.noindex": (
        "{url}: the page asks not to be indexed (robots noindex); not added",
        "{url}：该网页要求不被索引（robots noindex）；未加入",
    ),
    "web.robots": (
        "{count} links robots.txt asks crawlers not to read (the first: {url}); not read",
        "robots.txt 要求爬虫不要读取的链接 {count} 个（第一个：{url}）；未读取",
    ),
    "web.too_deep": (
        "{count} links more than {limit} clicks from the start (RAGAPP_SYNC__WEB_MAX_DEPTH); not followed (the "
        "first: {url})",
        "距起始页超过 {limit} 次点击的链接 {count} 个（RAGAPP_SYNC__WEB_MAX_DEPTH）；未跟随（第一个：{url}）",
    ),
    "web.similar": (
        "{shape}: more than {limit} pages with addresses of this one shape, as a program makes (a calendar's months, "
        "a search's pages); {count} more not followed (RAGAPP_SYNC__WEB_MAX_SIMILAR)",
        "{shape}：同一形式的地址超过 {limit} 个，是程序生成的链接（如日历的月份、搜索结果的分页）；"
        "另有 {count} 个未跟随（RAGAPP_SYNC__WEB_MAX_SIMILAR）",
    ),
    "web.page_limit": (
        "stopped at {limit} pages (RAGAPP_SYNC__WEB_MAX_PAGES); pages not reached keep what they had",
        "已达 {limit} 个网页的上限而停止（RAGAPP_SYNC__WEB_MAX_PAGES）；未访问到的网页保留原有内容",
    ),
    "web.byte_limit": (
        "stopped after {limit} MB read (RAGAPP_SYNC__WEB_MAX_CRAWL_MB); pages not reached keep what they had",
        "已读取 {limit} MB 而停止（RAGAPP_SYNC__WEB_MAX_CRAWL_MB）；未访问到的网页保留原有内容",
    ),
    "web.time_budget": (
        "stopped after {seconds} s spent on the site (RAGAPP_SYNC__WEB_CRAWL_TIMEOUT_S); pages not reached keep "
        "what they had",
        "在该网站上用时 {seconds} 秒后停止（RAGAPP_SYNC__WEB_CRAWL_TIMEOUT_S）；未访问到的网页保留原有内容",
    ),
    "web.error_storm": (
        "stopped after {count} failed requests in a row (the last: {reason}); the site seems to be down, pages keep "
        "what they had, tried again at the next sync",
        "连续 {count} 次请求失败后停止（最后一次：{reason}）；该网站似乎无法访问，网页保留原有内容，下次同步时重试",
    ),
    "web.start": ("the start page could not be read: {reason}", "无法读取起始页：{reason}"),
    "web.robots_unreachable": (
        "robots.txt could not be read ({reason}); the site is not crawled until it can be (RFC 9309)",
        "无法读取 robots.txt（{reason}）；在能读取之前不抓取该网站（RFC 9309）",
    ),
    "web.robots_start": (
        "robots.txt asks crawlers not to read the start page {url}; nothing was read",
        "robots.txt 要求爬虫不要读取起始页 {url}；未读取任何内容",
    ),
    "web.sitemap": ("the sitemap {url} could not be read: {reason}", "无法读取站点地图 {url}：{reason}"),
}
