"""The engine: ``build.build_engine`` wires the parts; ``Engine`` offers them as facets (chat, library, intents,
observability) that the UI, the evaluation commands and tests call. Never imports gradio."""
