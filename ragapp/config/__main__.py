"""``python -m ragapp.config``: the settings table that docs/configuration.md holds."""

import sys

from ragapp.config import settings_table

sys.stdout.write(settings_table() + "\n")
