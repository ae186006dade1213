"""``python -m ragapp.users``: the accounts command, ``ragapp.accounts.cli`` (its docstring lists the commands)."""

from ragapp.accounts.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
