"""The hostile battery's fixtures beyond the root's: the HTTP API's served app, for the API's cases."""

from tests.integration.conftest import serve_api  # noqa: F401  (a fixture, found here by name)
