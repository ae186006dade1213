"""``python -m ragapp.config``: the settings table the README's configuration section holds."""

import sys

from ragapp.config import settings_table

sys.stdout.write(settings_table() + "\n")
