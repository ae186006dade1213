"""ragapp's knowledge for MCP clients: the server (``server``), served at /mcp by the app (``ragapp.serve``) and
over stdio by ``python -m ragapp.mcp``."""
