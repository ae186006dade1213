"""What the page says when routing reaches past the intent tree, in each language with nothing of the other."""

from __future__ import annotations

from ragapp.ui.routing_words import uncovered_upload
from tests.text import shown


def test_the_upload_notice_names_the_knowledge_base_in_each_language() -> None:
    text = uncovered_upload("my_kb*")  # a name is data: escaped, never Markdown
    english, chinese = shown(text), shown(text, "zh")
    assert english.startswith("ℹ️ No intent searches **my\\_kb\\***: a question is searched there when no intent")
    assert chinese.startswith("ℹ️ 没有意图检索 **my\\_kb\\***：只有当问题与各意图都不够匹配")
    assert "intent" not in chinese and "意图" not in english
