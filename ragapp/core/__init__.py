"""The shared vocabulary every layer speaks: records, events, errors, token counts. Imports nothing of ragapp."""
