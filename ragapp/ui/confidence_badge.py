"""The badge under an answer that says how sure the app is of it: its level (icon and words, in both languages)
and, on hover or on click, tap or Enter, the checks behind it in words. Words and icons come from
``ragapp.core.confidence_words``; this module draws them.

A native ``<details>`` element: its summary takes a click, a tap and the keyboard (Tab, then Enter or Space) with
no script, and a screen reader says whether it is open; hovering shows the same reasons (``BADGE_HEAD``). Gradio's
sanitiser keeps ``details``, ``summary`` and classes (it drops ``aria-*`` and ``data-*`` attributes).
"""

from __future__ import annotations

from ragapp.core.confidence_words import Said, answer_look, reasons
from ragapp.core.events import AnswerEvent
from ragapp.ui.i18n import both

BADGE_CLASS = "confidence-badge"


def confidence_badge(answer: AnswerEvent) -> str:
    """The badge under ``answer`` (one line of HTML), or "" for an answer that states nothing from the documents
    (``answer_look``). A grounded answer whose confidence was not assessed gets the neutral "Not checked" badge:
    it states what the documents say, and must not pass for a checked one."""
    look = answer_look(answer)
    if look is None:
        return ""
    lines = [f'<span class="confidence-meaning">{_both(look.meaning)}</span>']
    for reason in reasons(answer.confidence):
        shown = f"{reason.icon} {_both(reason.sentence)}"
        lines.append(f'<span class="confidence-reason confidence-{reason.state}">{shown}</span>')
    summary = f'<summary><span class="confidence-icon">{look.icon}</span> {_both(look.label)}</summary>'
    why = f'<span class="confidence-why">{"".join(lines)}</span>'
    return f'<details class="{BADGE_CLASS} confidence-{look.tone}">{summary}{why}</details>'


def _both(said: Said) -> str:
    return both(said.english, said.chinese)


# Colour adds to the icon and the words, never replaces them. Hovering a closed badge shows its reasons floating
# (``::details-content``: Chromium 131, Safari 18.4, Firefox 143; an older browser still opens it on a click);
# opened, they sit in the page's flow, under the badge. Gradio's message text is a stacking context of its own
# (its opacity): the hovered one is lifted, opaque, above the messages after it, which would cover the reasons.
BADGE_HEAD = """<style>
#chatbot details.confidence-badge { display: inline-block; position: relative; margin-top: 0.3em;
  font-size: 0.85em; }
#chatbot details.confidence-badge > summary { display: inline-block; list-style: none; cursor: pointer;
  padding: 0.05em 0.65em; border: 1px solid; border-radius: 999px; }
#chatbot details.confidence-badge > summary::-webkit-details-marker { display: none; }
#chatbot details.confidence-badge > summary:focus-visible { outline: 2px solid var(--color-accent); }
#chatbot .confidence-high > summary { border-color: #16a34a; }
#chatbot .confidence-high .confidence-icon { color: #16a34a; }
#chatbot .confidence-medium > summary { border-color: #d97706; }
#chatbot .confidence-medium .confidence-icon { color: #d97706; }
#chatbot .confidence-low > summary { border-color: #dc2626; border-width: 2px; }
#chatbot .confidence-low .confidence-icon { color: #dc2626; }
#chatbot .confidence-unchecked > summary { border-style: dashed; border-color: var(--border-color-primary); }
#chatbot details.confidence-badge:hover::details-content { content-visibility: visible; display: block; }
#chatbot .prose:has(> details.confidence-badge:hover) { position: relative; z-index: 30; opacity: 1; }
#chatbot .confidence-why { display: block; position: absolute; z-index: 20; left: 0; top: 100%; width: max-content;
  max-width: min(28em, 80vw); margin-top: 0.2em; padding: 0.5em 0.7em; border: 1px solid var(--border-color-primary);
  border-radius: var(--radius-md); background: var(--background-fill-primary); color: var(--body-text-color);
  box-shadow: var(--shadow-drop-lg); }
#chatbot details.confidence-badge[open] .confidence-why { position: static; box-shadow: none; }
#chatbot .confidence-meaning { display: block; font-weight: 600; margin-bottom: 0.25em; }
#chatbot .confidence-reason { display: block; }
#chatbot details.model-guess > summary { display: inline-block; list-style: none; cursor: pointer;
  padding: 0.15em 0.8em; border: 1px solid var(--border-color-primary); border-radius: var(--radius-md);
  background: var(--button-secondary-background-fill); font-size: 0.9em; }
#chatbot details.model-guess > summary::-webkit-details-marker { display: none; }
#chatbot details.model-guess > summary:focus-visible { outline: 2px solid var(--color-accent); }
#chatbot details.model-guess[open] > summary { margin-bottom: 0.4em; }
</style>"""
