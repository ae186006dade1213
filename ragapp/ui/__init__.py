"""The page (Gradio). The modules whose functions handle the page's events keep their annotations as objects (no
``from __future__ import annotations``): Gradio reads a handler's type hints several times for each event it
wires, at every start, and an annotation kept as a string is compiled again at each read
(``tests/integration/test_page_handlers.py``)."""
