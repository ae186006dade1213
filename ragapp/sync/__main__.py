"""``python -m ragapp.sync``: the sync command line, ``ragapp.sync.cli`` (its docstring lists the commands)."""

from ragapp.sync.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
