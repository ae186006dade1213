"""``python -m ragapp.sync``: the folders, git repositories and websites knowledge bases follow.

    python -m ragapp.sync                      list the sources, their state and last report
    python -m ragapp.sync show NAME            a source's last report in full
    python -m ragapp.sync add NAME --folder /srv/handbook --kb handbook [--include '*.md'] [--exclude 'drafts/*']
    python -m ragapp.sync add NAME --git https://host/repo.git --kb manual [--branch main] [--interval 600]
    python -m ragapp.sync add NAME --web https://docs.example.com/manual/ --kb manual [--exclude 'old/*']
    python -m ragapp.sync run NAME             sync now, in this process, and print the report
    python -m ragapp.sync pause NAME | resume NAME
    python -m ragapp.sync remove NAME [--delete-documents]

It reads the same settings as the app (``RAGAPP_*``: the state folder, or the shared database). Exit status: 0
done, 1 the sync failed, 2 a request that cannot be done (the message says why), 3 not run (paused, or another
replica or the app is syncing that source now). Every change (add, run, pause, resume, remove) is written to the
app's audit log as done by the user "cli".
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict

from ragapp.audit import CLI_ACTOR, AuditAction, AuditLog, open_audit
from ragapp.config import Settings
from ragapp.core.errors import RagAppError
from ragapp.db import open_database
from ragapp.sync.service import add_source
from ragapp.sync.sources import SourceStatus, SyncError, SyncReport
from ragapp.sync.standalone import open_service, open_store

SHOWN = 20  # paths listed per kind of change; the rest are counted


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m ragapp.sync", description=(__doc__ or "").split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=(__doc__ or "").split("\n\n", 1)[1],
    )  # fmt: skip
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    sub = p.add_subparsers(dest="command")
    sub.add_parser("list", help="the sources (the default)")
    for command, text in (("show", "a source's last report in full"), ("run", "sync a source now"),
                          ("pause", "stop syncing a source"), ("resume", "sync a source again")):  # fmt: skip
        sub.add_parser(command, help=text).add_argument("name")
    add = sub.add_parser("add", help="follow a folder, a git repository or a website")
    add.add_argument("name")
    where = add.add_mutually_exclusive_group(required=True)
    where.add_argument("--folder", help="an absolute path on this server")
    where.add_argument("--git", help="a repository's path or URL (anything `git clone` accepts)")
    where.add_argument("--web", help="a website's start page or sitemap (http or https); its folder is followed")
    add.add_argument("--kb", required=True, help="the knowledge base it fills")
    add.add_argument("--include", action="append", default=[], help="a glob of files to take (repeatable)")
    add.add_argument("--exclude", action="append", default=[], help="a glob of files to leave out (repeatable)")
    add.add_argument("--interval", type=float, help="seconds between syncs (default: RAGAPP_SYNC__DEFAULT_INTERVAL_S)")
    add.add_argument("--branch", default="", help="git: the branch to follow (default: the remote's default)")
    remove = sub.add_parser("remove", help="stop following a source")
    remove.add_argument("name")
    remove.add_argument("--delete-documents", action="store_true", help="delete the documents it added, too")
    return p


def main(argv: Sequence[str] | None = None, settings: Settings | None = None) -> int:
    args = _parser().parse_args(argv)
    settings = settings or Settings()
    action = _AUDITED.get(args.command or "list")
    try:
        if action is None:  # a listing changes nothing
            return _run(args, settings)
        location = args.git or args.web or args.folder if action == AuditAction.SOURCE_ADD else ""
        detail = {"kb": args.kb, "location": location} if action == AuditAction.SOURCE_ADD else {}
        with _audit_log(settings) as audit, audit.attempt(CLI_ACTOR, action, args.name, **detail) as note:
            note["exit_status"] = code = _run(args, settings)
        return code
    except RagAppError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2


_AUDITED = {
    "add": AuditAction.SOURCE_ADD,
    "run": AuditAction.SOURCE_SYNC,
    "pause": AuditAction.SOURCE_PAUSE,
    "resume": AuditAction.SOURCE_RESUME,
    "remove": AuditAction.SOURCE_REMOVE,
}


@contextmanager
def _audit_log(settings: Settings) -> Iterator[AuditLog]:
    """The app's audit log (its SQLite file, or the shared database through a connection of its own)."""
    url = settings.store.database_url.get_secret_value().strip()
    database = open_database(url, pool_size=1) if url else None
    audit = open_audit(settings, database)
    try:
        yield audit
    finally:
        audit.close()
        if database is not None:
            database.close()


def _run(args: argparse.Namespace, settings: Settings) -> int:
    command = args.command or "list"
    if command == "run" or (command == "remove" and args.delete_documents):
        service, _store, opened = open_service(settings)
        try:
            if command == "remove":
                deleted = service.remove(args.name, delete_documents=True)
                _say(f"removed the source {args.name}, and its {deleted} documents")
                return 0
            outcome = service.run(args.name)
        finally:
            opened.close()
        if outcome.report is None:
            why = "it is paused" if outcome.state == "paused" else "another replica (or the app) is syncing it now"
            _say(f"{args.name} was not synced: {why}.")
            return 3
        _print_report(args.name, outcome.state, outcome.report, args.json)
        return 1 if outcome.state == "failed" else 0
    store, opened = open_store(settings)
    try:
        if command == "list":
            _print_list(store.statuses(), args.json)
        elif command == "show":
            found = next((s for s in store.statuses() if s.source.name == args.name), None)
            if found is None:
                raise SyncError(f"No source named {args.name!r}; `python -m ragapp.sync` lists them.")
            if found.report is None:
                _say(f"{args.name}: {found.state}, never synced yet.")
            else:
                _print_report(args.name, found.state, found.report, args.json)
        elif command == "add":
            kind, location = (
                ("git", args.git) if args.git else ("web", args.web) if args.web else ("folder", args.folder)
            )
            source = add_source(store, settings.sync, args.name, kind, location, args.kb, args.include,
                                args.exclude, args.interval, args.branch, settings.paths.state_dir)  # fmt: skip
            _say(f"added {source.name}: {source.kind} {source.location} -> knowledge base '{source.kb}'; the app "
                 f"syncs it within its interval, or now with `python -m ragapp.sync run {source.name}`")  # fmt: skip
        elif command in ("pause", "resume"):
            if not store.set_paused(args.name, command == "pause"):
                raise SyncError(f"No source named {args.name!r}; `python -m ragapp.sync` lists them.")
            _say(f"{args.name} {'paused' if command == 'pause' else 'resumed'}")
        elif command == "remove":
            if not store.remove(args.name):
                raise SyncError(f"No source named {args.name!r}; `python -m ragapp.sync` lists them.")
            _say(f"removed the source {args.name}; its documents stay (--delete-documents deletes them)")
    finally:
        opened.close()
    return 0


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")


def _print_list(statuses: list[SourceStatus], as_json: bool) -> None:
    if as_json:
        _say(json.dumps([_status_json(s) for s in statuses], indent=2))
        return
    if not statuses:
        _say("No sources yet: `python -m ragapp.sync add NAME --folder PATH --kb KB` adds one.")
        return
    for s in statuses:
        src = s.source
        progress = f" {s.done}/{s.total}" if s.state == "running" and s.total else ""
        last = f"last {s.last_run_at}: {s.report.summary()}" if s.report else "never synced"
        _say(f"{src.name}  {src.kind} {src.location} -> {src.kb}  [{s.state}{progress}]  {last}")


def _status_json(s: SourceStatus) -> dict[str, object]:
    return {"source": asdict(s.source), "state": s.state, "last_run_at": s.last_run_at, "done": s.done,
            "total": s.total, "commit": s.commit, "report": s.report.to_json() if s.report else None}  # fmt: skip


def _print_report(name: str, state: str, report: SyncReport, as_json: bool) -> None:
    if as_json:
        _say(json.dumps({"source": name, "state": state, "report": report.to_json()}, indent=2))
        return
    commit = f" at {report.commit[:12]}" if report.commit else ""
    _say(f"{name}{commit} [{state}]: {report.summary()}")
    if report.requests:  # a website
        _say(f"  {report.seen} pages seen, {report.hashed} read, {report.ingested} ingested; {report.requests} "
             f"requests, {report.downloaded / 1e6:.1f} MB; {report.ignored} links not followed (other sites, "
             "files that are not documents)")  # fmt: skip
    else:
        _say(f"  {report.seen} files seen, {report.hashed} read, {report.ingested} ingested; {report.ignored} of a "
             "type not read")  # fmt: skip
    listed: list[tuple[str, list[str]]] = [
        ("added", report.added), ("updated", report.updated), ("removed", report.removed),
        ("renamed", [f"{a} -> {b}" for a, b in report.renamed]), ("retrying (still being written)", report.retrying),
        ("refused", [f"{r.path}: {r.reason}" for r in report.refused]),
    ]  # fmt: skip
    for what, paths in listed:
        if paths:
            _say(f"  {what}:")
            for path in paths[:SHOWN]:
                _say(f"    {path}")
            if len(paths) > SHOWN:
                _say(f"    ... and {len(paths) - SHOWN} more")
