"""Serving: the engine and its Gradio page turned into the web app people reach (headers, sessions, uploads)."""
