"""The catalogue's words for an answer (``ragapp.core.said``)."""

from __future__ import annotations

# code: (English, Chinese)
ANSWER: dict[str, tuple[str, str]] = {
    # What a confidence check saw (ragapp.qa.confidence, ragapp.qa.answer_check): a check's detail
    "confidence.unsupported": ("{n} of {of} sentences not in the passages", "{of} 句中有 {n} 句不在原文中"),
    "confidence.none_supported": ("none of its sentences is in the passages", "没有一句在原文中"),
    "confidence.supported": ("{n} of {of} sentences in the passages", "{of} 句中有 {n} 句在原文中"),
    "confidence.citation_for_value": (
        "a citation stands where the answer's value belongs",
        "回答中该给出数值的地方只有一个引用",
    ),
    "confidence.kind_missing": (
        "the question asks for a {kind}; the answer gives none",
        "问题问的是{kind}，回答没有给出",
    ),
    "confidence.kind_given": ("gives the {kind} asked for", "给出了所问的{kind}"),
    "confidence.quote_lacks": ("the quoted sentence does not say {missing}", "引用的原文句子没有说 {missing}"),
    "confidence.quote_same": ("the quoted sentence says the same", "引用的原文句子说法一致"),
    "confidence.parts_missing": ("{n} of {of} parts not in the documents", "{of} 个部分中有 {n} 个在文档中找不到"),
    "confidence.part": ("part {n}: ", "第 {n} 部分："),  # then what the check saw of that part
    "confidence.part_only": ("part {n}", "第 {n} 部分"),
    "confidence.part_figure": ("part {n}: {figure}", "第 {n} 部分：{figure}"),  # the on-topic score's figure
    "confidence.echoed": (
        "the model's reply only repeated the question; the documents' own sentence is shown instead",
        "模型的回复只是重复了问题，改为显示文档的原句",
    ),
}
# value name: {value: (English, Chinese)}
ANSWER_TERMS: dict[str, dict[str, tuple[str, str]]] = {
    # the kind of answer a question asks for (ragapp.qa.fit.AnswerKind)
    "kind": {
        "number": ("number", "数字"),
        "version": ("version", "版本号"),
        "year": ("year", "年份"),
        "yes-no": ("yes-no", "是或否"),
    },
}
