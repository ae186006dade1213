"""The API's documentation page at /docs: plain HTML made from the OpenAPI schema on the server.

Swagger UI and ReDoc load their scripts from a CDN, which the app's Content-Security-Policy forbids (and an
offline server cannot reach), and no copy of them ships with our packages. So the page lists each route with its
parameters and body, and links /openapi.json for any OpenAPI tool (Swagger Editor, Postman, an SDK generator).
"""

from __future__ import annotations

import html
from typing import Any

_STYLE = """
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
h2{margin-top:2rem;border-bottom:1px solid #ddd} code,pre{font:13px ui-monospace,monospace;background:#f5f5f5}
pre{padding:.6rem;overflow:auto} .op{margin:1rem 0 1.5rem} .m{display:inline-block;min-width:4.5rem;font-weight:700}
.get{color:#0a6}.post{color:#06c}.delete{color:#c30} td{padding:.1rem .6rem;vertical-align:top} .d{color:#555}
"""


def _ref_name(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        return f"list of {_ref_name(schema['items'])}"
    return str(schema.get("type", "object"))


def _schema_text(name: str, schemas: dict[str, Any], inline: dict[str, Any] | None = None) -> str:
    schema = inline if inline is not None else schemas.get(name.removeprefix("list of "), {})
    rows = []
    for field, spec in schema.get("properties", {}).items():
        kind = _ref_name(spec) if "anyOf" not in spec else " | ".join(_ref_name(s) for s in spec["anyOf"])
        note = spec.get("description", "")
        rows.append(f"  {field}: {kind}" + (f"  — {note}" if note else ""))
    return f"{name}\n" + "\n".join(rows)


def docs_page(spec: dict[str, Any]) -> str:
    schemas = spec.get("components", {}).get("schemas", {})
    e = html.escape
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{e(spec['info']['title'])}</title>",
        f"<style>{_STYLE}</style></head><body><h1>{e(spec['info']['title'])}</h1>",
        f"<p>{e(spec['info'].get('description', ''))}</p>",
        "<p>The machine-readable schema: <a href='openapi.json'>/openapi.json</a> (OpenAPI "
        f"{e(spec.get('openapi', ''))}). Load it in any OpenAPI tool to try the routes.</p>",
    ]
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, methods in spec.get("paths", {}).items():
        for method, op in methods.items():
            by_tag.setdefault((op.get("tags") or ["other"])[0], []).append((method, path, op))
    for tag, ops in by_tag.items():
        parts.append(f"<h2>{e(tag)}</h2>")
        for method, path, op in ops:
            badge = f"<span class='m {e(method)}'>{e(method.upper())}</span>"
            parts.append(f"<div class='op'>{badge} <code>{e(path)}</code>")
            parts.append(f" — {e(op.get('summary', ''))}")
            params = op.get("parameters", [])
            if params:
                rows = "".join(
                    f"<tr><td><code>{e(p['name'])}</code></td><td>{e(p['in'])}</td>"
                    f"<td class='d'>{e(p.get('description') or p.get('schema', {}).get('description', ''))}</td></tr>"
                    for p in params
                )
                parts.append(f"<table>{rows}</table>")
            body = op.get("requestBody", {}).get("content", {})
            for media, content in body.items():
                schema = content.get("schema", {})
                name = _ref_name(schema)
                text = _schema_text(name, schemas, None if "$ref" in schema else schema)
                parts.append(f"<div>body ({e(media)}):</div><pre>{e(text)}</pre>")
            reply = op.get("responses", {})
            ok: dict[str, Any] = next((r for code, r in reply.items() if code.startswith("2")), {})
            for content in ok.get("content", {}).values():
                name = _ref_name(content.get("schema", {}))
                if name.removeprefix("list of ") in schemas:
                    parts.append(f"<pre>{e('reply: ' + _schema_text(name, schemas))}</pre>")
                break
            parts.append("</div>")
    parts.append("</body></html>")
    return "".join(parts)
