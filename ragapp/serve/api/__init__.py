"""The HTTP API at /v1 (OpenAI-compatible chat, documents, retrieval, traces), served beside the Gradio page."""
