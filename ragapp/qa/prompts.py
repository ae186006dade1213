"""Prompt text, in English and Chinese. The answer's language follows the question's."""

from __future__ import annotations

from collections.abc import Sequence

from ragapp.core.lang import is_chinese
from ragapp.core.tokens import estimate_tokens
from ragapp.core.types import ChatTurn, LeafScore, RetrievedChunk
from ragapp.qa.injection import for_model

MEMORY_TOKENS = 200  # the memories' part of a prompt, at most (``memory.max_tokens`` sets it)

SYSTEM_EN = (
    "You are a careful assistant that answers questions about the user's documents. Use only the numbered "
    "context passages. State the answer itself (the value, version or name). After each statement, cite the "
    "passage(s) it comes from as [1], [2]. A marker names a passage; it is never the answer. If the passages do "
    "not contain the answer, say that the knowledge base does not contain it; never invent facts. Answer in "
    "English, briefly."
)
SYSTEM_ZH = (
    "你是一个严谨的知识库助手，只根据编号的参考资料回答用户的问题。先写出答案本身（数值、版本或名称），"
    "再在句后用 [1]、[2] 标注所依据的资料编号；编号只指明出处，不能代替答案。"
    "如果资料中没有答案，就直接说明知识库中没有相关内容，不要编造。请用简体中文简洁地回答。"
)
NOT_FOUND_EN = (
    "I could not find anything about this in the knowledge base, so I won't guess. Try rephrasing the "
    "question, or upload a document that covers it."
)
NOT_FOUND_ZH = "知识库中没有找到与这个问题相关的内容，我不做猜测。可以换个说法提问，或上传包含相关内容的文档。"
# Instead of an answer whose key facts are not in the passages (see ``qa.grounding``).
UNSUPPORTED_EN = (
    "The documents do not say this: the passages found do not support the answer, so I won't guess. The "
    "closest passages are listed below."
)
UNSUPPORTED_ZH = "文档中没有提到这一点：找到的段落不支持生成的回答，我不做猜测。下面列出了最接近的段落。"
# Instead of an answer the app is not sure of (``qa.answer_check.withheld``): the passage most likely to hold the
# answer follows, and the withheld guess on request.
NOT_SURE_EN = (
    "Not sure: I found no sentence in the documents that surely answers this, so I won't guess. The passage "
    "most likely to hold the answer is below."
)
NOT_SURE_ZH = "不确定：文档中没有找到能确定回答这个问题的句子，我不做猜测。下面是最可能包含答案的段落。"
# Before the passage sentence quoted instead of a reply that only repeated the question (``qa.answer_check``).
QUOTED_EN = "The documents say: "
QUOTED_ZH = "文档原文："


def not_found_message(question: str) -> str:
    return NOT_FOUND_ZH if is_chinese(question) else NOT_FOUND_EN


def unsupported_message(question: str) -> str:
    return UNSUPPORTED_ZH if is_chinese(question) else UNSUPPORTED_EN


def not_sure_message(question: str) -> str:
    return NOT_SURE_ZH if is_chinese(question) else NOT_SURE_EN


def part_not_sure_message(question: str, part: str) -> str:
    """In an answer put together from its parts, instead of a part the app is not sure of."""
    return f"不确定：{part}" if is_chinese(question) else f"Not sure: {part}"


def passages_only_message(question: str, count: int) -> str:
    """Instead of an answer when the model failed: the passages themselves follow."""
    markers = " ".join(f"[{n}]" for n in range(1, count + 1))
    if is_chinese(question):
        return f"模型暂时无法生成回答。以下是知识库中最相关的段落：{markers}"
    return f"The model could not produce an answer right now. These are the most relevant passages: {markers}"


def part_missing_message(question: str, part: str) -> str:
    """In an answer put together from its parts, instead of a part the documents do not answer."""
    return f"文档中没有提到：{part}" if is_chinese(question) else f"The documents do not say: {part}"


def answer_slot(question: str) -> str:
    """The model context answers in this question's language use: their instructions stay read there between
    answers, where other model calls (rewrite, translation) and the other language's answers would evict them."""
    return "answer-zh" if is_chinese(question) else "answer-en"


def quoted_message(question: str, sentence: str, number: int) -> str:
    return f"{QUOTED_ZH if is_chinese(question) else QUOTED_EN}“{sentence}” [{number}]"


def system_prompt(chinese: bool, passages: int) -> str:
    """The answering rules. With a single passage the citation example shows only [1]: the 1.5B model copies
    the example, and a lone passage cited as "[2]" left a correct answer without a valid citation."""
    text = SYSTEM_ZH if chinese else SYSTEM_EN
    return text.replace("[1], [2]", "[1]").replace("[1]、[2]", "[1]") if passages == 1 else text


def format_context(chunks: Sequence[RetrievedChunk]) -> str:
    blocks = []
    for number, item in enumerate(chunks, start=1):
        where = " · ".join(p for p in (item.chunk.source, item.chunk.location) if p)
        blocks.append(f"[{number}] ({where})\n{item.chunk.text}")
    return "\n\n".join(blocks)


def answer_messages(
    question: str,
    chunks: Sequence[RetrievedChunk],
    history: Sequence[ChatTurn] = (),
    summary: str = "",
    part: str | None = None,
    memories: Sequence[str] = (),
    memory_tokens: int = MEMORY_TOKENS,
    earlier: Sequence[tuple[str, str]] = (),
) -> list[ChatTurn]:
    """The answering prompt (``memories``: the asker's recalled memories, in their own part: ``memory_block``);
    with ``part``, for that part of a question of several parts, the whole question beside it (a part may lean
    on the one before: "which call stops that again?"), and the ``earlier`` parts (each with the model's reply)
    asked and answered before it, turn by turn. So the first part's prompt begins every later one and the model
    reads the passages once for all of them (the KV cache keeps them); and a later part is asked after the
    earlier one's answer, not beside it: asked beside it, the 1.5B model gave the earlier part's answer again
    ("它把链接换成了哪个文件？" → "file-rc"; docs/lab-log.md, "Parts asked turn by turn")."""
    chinese = is_chinese(question)
    system = system_prompt(chinese, len(chunks)) + _summary_note(summary, chinese)
    system += memory_block(memories, chinese, memory_tokens)
    label_context, label_question = ("参考资料", "问题") if chinese else ("Context", "Question")
    # The question comes last. Repeating the rules after it was tried and made the 1.5B model answer with a
    # bare "[2]" or refuse answerable questions (2/14 correct on the demo questions against 8/14 without).
    user = f"{label_context}:\n{format_context(chunks)}\n\n{label_question}: {question}"
    if part is None:
        return [ChatTurn("system", system), *history, ChatTurn("user", user)]
    label = PART_ZH if chinese else PART_EN
    asked = [*(p for p, _ in earlier), part]
    turns = [ChatTurn("user", f"{user}\n{label}{asked[0]}")]
    for (_, reply), later in zip(earlier, asked[1:], strict=True):
        turns += [ChatTurn("assistant", reply), ChatTurn("user", f"{label}{later}")]
    return [ChatTurn("system", system), *history, *turns]


# Before a part of the question, answered on its own (``answer_messages``); replay reads the part back after it.
PART_EN = "Answer only this part of it now: "
PART_ZH = "现在只回答其中这一问："


SYSTEM_REPLY_EN = (
    "You are ragapp, an assistant that answers questions from the documents in the user's knowledge bases "
    "and cites the passages it used. Reply to the user's message briefly and kindly, in English."
)
SYSTEM_REPLY_ZH = (
    "你是 ragapp，一个根据用户知识库中的文档回答问题并标注出处的助手。请用简体中文简短、友好地回复用户的消息。"
)


def system_messages(
    question: str,
    prompt: str | None,
    history: Sequence[ChatTurn] = (),
    summary: str = "",
    memories: Sequence[str] = (),
    memory_tokens: int = MEMORY_TOKENS,
) -> list[ChatTurn]:
    """A reply without retrieval (greetings, who-are-you, feedback), following the intent's own prompt."""
    chinese = is_chinese(question)
    system = SYSTEM_REPLY_ZH if chinese else SYSTEM_REPLY_EN
    if prompt:
        system += "\n" + ("具体要求：" if chinese else "For this message: ") + prompt
    system += _summary_note(summary, chinese) + memory_block(memories, chinese, memory_tokens)
    return [ChatTurn("system", system), *history, ChatTurn("user", question)]


def clarify_text(question: str, choices: Sequence[LeafScore]) -> str:
    """The question the app asks back; the choices are shown as buttons under it (so they are not repeated)."""
    if is_chinese(question):
        return f"这个问题可能涉及 {len(choices)} 个不同的主题，你指的是哪一个？请点击下面的选项。"
    return f"This could be about {len(choices)} different things. Which one do you mean? Pick one below."


def _summary_note(summary: str, chinese: bool) -> str:
    if not summary:
        return ""
    return ("\n此前对话的摘要：" if chinese else "\nSummary of the earlier conversation: ") + summary


MEMORY_EN = (
    "\nWhat this user told you before (their own words, not documents: never cite them or number them; use them "
    "only to understand what the user means, such as which product or setting they have):"
)
MEMORY_ZH = (
    "\n该用户之前告诉过你的情况（用户自己的话，不是参考资料：不要引用或编号；"
    "只用来理解用户指的是什么，例如用户的产品或环境）："
)


def memory_block(memories: Sequence[str], chinese: bool, max_tokens: int = MEMORY_TOKENS) -> str:
    """The asker's recalled memories (best first) as their own part of the system prompt, labelled as what the
    user said before; "" without any. Screened again as document text is (``injection.for_model``): a memory
    kept before screening, or changed in the database, still cannot instruct the model. Cut to ``max_tokens``
    (whole memories: the best ones first)."""
    lines: list[str] = []
    used = 0
    for text in memories:
        line = "- " + " ".join(for_model(text).split())
        cost = estimate_tokens(line)
        if used + cost > max_tokens:
            break
        lines.append(line)
        used += cost
    if not lines:
        return ""
    return (MEMORY_ZH if chinese else MEMORY_EN) + "\n" + "\n".join(lines)
