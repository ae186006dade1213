"""The engine: ``build.build_engine`` wires the parts; ``Engine`` offers them as facets (chat, library, intents,
observability) that the UI, the evaluation commands and tests call. Never imports gradio.

The UI (``ragapp.ui``) and the HTTP API (``ragapp.serve``) reach the rest of the app only through here, through
``ragapp.core`` and ``ragapp.config`` (an import-linter contract in pyproject.toml keeps it so): the types of the
parts below that they show or take are re-exported here.
"""

from ragapp.ingest.pipeline import kb_name
from ragapp.qa.pipeline import SEARCH_ALL, Clarified
from ragapp.retrieval.fusion import FUSIONS
from ragapp.router.decide import RoutingDecision
from ragapp.router.tree import GROUP, Format, IntentTree, IntentTreeError
from ragapp.store.procedural import TableRow as ExperienceRow
from ragapp.testcases.answers import AnswerCheck, AnswerRun, CaseAnswer
from ragapp.testcases.scoring import CaseReport
from ragapp.testcases.store import TestCase
from ragapp.testcases.truthfulness import Comparison, Tally, Verdict
from ragapp.tracing.model import RoutingRecord, Span, SupportRecord, Trace
from ragapp.tracing.records import RetrievalRecord, retrieval_record
from ragapp.tracing.store import TraceSummary

__all__ = [
    "FUSIONS",
    "GROUP",
    "SEARCH_ALL",
    "AnswerCheck",
    "AnswerRun",
    "CaseAnswer",
    "CaseReport",
    "Clarified",
    "Comparison",
    "ExperienceRow",
    "Format",
    "IntentTree",
    "IntentTreeError",
    "RetrievalRecord",
    "RoutingDecision",
    "RoutingRecord",
    "Span",
    "SupportRecord",
    "Tally",
    "TestCase",
    "Trace",
    "TraceSummary",
    "Verdict",
    "kb_name",
    "retrieval_record",
]
