"""Accounts: the users people sign in with, their API keys and who may read and edit each knowledge base.

- ``model``: the records, the views the Admin tab lists and the errors of a refused change;
- ``document``: where the accounts live (a JSON file, or one row of the shared database);
- ``store``: ``UserStore``, every read and change, with the last-admin rule inside its locked edit;
- ``kb_access``: which knowledge bases a user may read and edit;
- ``service``: ``Accounts``, the one way in for the engine, the Admin tab and the HTTP API (both through the
  engine) and the command line;
- ``cli``: ``python -m ragapp.users``.

The roles and what each may do are in ``ragapp.core.access``: every layer above the core checks them.
"""
