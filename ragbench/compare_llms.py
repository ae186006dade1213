#!/usr/bin/env python
"""Compare the packaged local chat models (Qwen2.5-Coder 1.5B vs 0.5B) on RAG-style prompts.

Each of the 12 fixed prompts (6 Chinese, 6 English) gives 3-4 short numbered passages about a fictional
product and a question. Ten are answerable from exactly one passage; two are not, and the right reply
says the context does not tell. Each model runs in its own fresh process (clean peak-memory figure)
through the app's real ``llama_cpp`` backend, greedy decoding, with the given thread count.

Three prompt styles: "basic" (system prompt: answer in the question's language, cite [n], say when the
context is silent), "strict" (the same plus a literal refusal sentence to copy) and "reminder" (basic,
with the rules repeated after the question in the question's language). Metrics per model and prompt:
load time, time to first token (prompt processing included), decode tokens/s, whole-answer time,
answerable questions with the expected fact, the right passage cited, refusals on the two unanswerable
ones (a refusal phrase and no invented figure), reply in the question's language, peak RSS. Pasting
back several passages counts as a wrong answer. Timings are only meaningful on an otherwise idle
machine: the load average is printed before and after, and the "best" figures (lowest TTFT, highest
tokens/s) are the ones least disturbed by other processes.

Usage
  .venv/bin/python -m ragbench.compare_llms [--threads 2] [--models qwen2.5-coder-1.5b ...]
      [--prompts basic strict reminder] [--answers] [--json out.json]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import re
import resource
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

_BASIC_SYSTEM = (
    "You answer questions using only the numbered context passages the user gives you.\n"
    "- Answer in the language of the question: Chinese for a Chinese question, English for an English one.\n"
    "- Be brief and cite the passages you used like [1] or [2].\n"
    "- If the passages do not contain the answer, say that the context does not say, and do not guess."
)


@dataclass(frozen=True)
class PromptStyle:
    """A system prompt, and optionally a reminder appended to the user turn in the question's language."""

    system: str
    reminder: dict[str, str] = field(default_factory=dict)


PROMPTS = {
    # What the brief asks for: answer in the question's language, cite [n], say when the context is silent.
    "basic": PromptStyle(_BASIC_SYSTEM),
    # The same, plus a literal refusal sentence to copy. Small models then over-refuse.
    "strict": PromptStyle(
        "You answer questions about the user's documents using only the numbered context passages.\n"
        "1. Reply in the same language as the question.\n"
        "2. Answer in one short sentence and cite the passage you used, e.g. [2].\n"
        "3. If no passage states the answer, do not guess and do not use outside knowledge. Reply only: "
        '"The context does not say." to an English question, or "上下文中没有提到。" to a Chinese question.'
    ),
    # The basic system prompt, with the rules repeated after the question in its own language: small
    # models weigh the end of the user turn most, and a Chinese reminder keeps Chinese replies Chinese.
    "reminder": PromptStyle(
        _BASIC_SYSTEM,
        {
            "en": "Answer from the passages above in English and cite the passage like [n]. "
            "If they do not contain the answer, say that the context does not say.",
            "zh": "请只根据上面的段落用中文回答，并用 [n] 标注出处。如果段落中没有答案，请说明上下文没有提到。",
        },
    ),
}


@dataclass(frozen=True)
class Case:
    """One RAG prompt: numbered passages, a question, and how to judge the reply."""

    case_id: str
    lang: str
    passages: tuple[str, ...]
    question: str
    expected: tuple[str, ...] = ()  # any of these in the reply (spaces ignored) counts as correct
    cite: int | None = None  # the passage that holds the answer
    invented: str | None = None  # for unanswerable cases: a regex that matches a made-up answer

    @property
    def answerable(self) -> bool:
        return self.cite is not None


CASES: tuple[Case, ...] = (
    Case(
        "en-kettle",
        "en",
        (
            "The Aurora K2 kettle holds 1.7 litres and draws 2200 W.",
            "Aurora K2 carries a 3-year warranty if registered within 30 days of purchase.",
            "The keep-warm mode of the Aurora K2 holds water between 40 and 95 °C for up to 4 hours.",
            "Clean the limescale filter of the Aurora K2 once a month with white vinegar.",
        ),
        "How long can the Aurora K2 keep water warm?",
        ("4 hours", "four hours"),
        cite=3,
    ),
    Case(
        "en-drone",
        "en",
        (
            "The Nimbus 9 drone weighs 249 g, so it needs no registration in many countries.",
            "Nimbus 9 records 4K video at 60 frames per second.",
            "With the standard battery the Nimbus 9 flies for up to 38 minutes.",
        ),
        "What is the maximum flight time of the Nimbus 9?",
        ("38 minutes", "38 min"),
        cite=3,
    ),
    Case(
        "en-solar",
        "en",
        (
            "The Helio Pro folding solar charger delivers up to 28 W in full sun.",
            "Helio Pro is rated IP67: dust-tight and protected against immersion up to 1 m.",
            "It has two USB-A ports and one USB-C port.",
        ),
        "What is the waterproof rating of the Helio Pro?",
        ("IP67",),
        cite=2,
    ),
    Case(
        "en-vacuum",
        "en",
        (
            "The Orbit R5 robot vacuum has a 5200 mAh battery that lasts about 180 minutes.",
            "The Orbit R5 app can store up to 3 floor maps.",
            "When its battery falls below 15%, the Orbit R5 stops cleaning and returns to its dock.",
            "The dust bin of the Orbit R5 holds 0.45 litres.",
        ),
        "At what battery level does the Orbit R5 go back to its dock?",
        ("15%", "15 %", "15 percent"),
        cite=3,
    ),
    Case(
        "en-tablet",
        "en",
        (
            "The Quill S e-ink tablet has a 10.3-inch screen at 300 ppi.",
            "One charge of the Quill S lasts three weeks of reading; a full charge takes 2.5 hours.",
            "The Quill S stylus is sold separately for 49 dollars.",
            "Quill S has 32 GB of storage.",
        ),
        "How long does it take to fully charge the Quill S?",
        ("2.5 hours", "2.5 hrs", "two and a half hours"),
        cite=2,
    ),
    Case(
        "en-kettle-price",
        "en",
        (
            "The Aurora K2 kettle holds 1.7 litres and draws 2200 W.",
            "Aurora K2 carries a 3-year warranty if registered within 30 days of purchase.",
            "The keep-warm mode of the Aurora K2 holds water between 40 and 95 °C for up to 4 hours.",
        ),
        "How much does the Aurora K2 cost?",
        invented=r"[$€£¥]\s*\d|\d+(\.\d+)?\s*(dollars|usd|euros?|eur|pounds|yuan|元)",
    ),
    Case(
        "zh-vacuum",
        "zh",
        (
            "星澜 S7 扫地机器人的最大吸力为 6000 Pa。",
            "星澜 S7 的水箱容量为 350 毫升，可拖地约 150 平方米。",
            "星澜 S7 配备 5200 mAh 电池，续航约 180 分钟。",
            "星澜 S7 整机保修两年。",
        ),
        "星澜 S7 的水箱容量是多少？",
        ("350毫升", "350ml", "350mL"),
        cite=2,
    ),
    Case(
        "zh-ricecooker",
        "zh",
        (
            "青禾 F3 智能电饭煲容量为 4 升，适合 2 到 6 人使用。",
            "青禾 F3 的预约功能最长可设置 24 小时。",
            "青禾 F3 内胆为陶瓷涂层，请勿使用金属勺。",
        ),
        "青禾 F3 的预约功能最长可以设置多久？",
        ("24小时", "二十四小时"),
        cite=2,
    ),
    Case(
        "zh-ebike",
        "zh",
        (
            "飞鲸 T2 电动自行车最高时速 25 公里。",
            "飞鲸 T2 的电池可拆卸，从没电到充满需要 6 小时。",
            "飞鲸 T2 满电续航约 60 公里。",
            "飞鲸 T2 整车重量 22 公斤。",
        ),
        "飞鲸 T2 充满电需要多长时间？",
        ("6小时", "六小时", "6个小时", "六个小时"),
        cite=2,
    ),
    Case(
        "zh-earbuds",
        "zh",
        (
            "云雀 Air 无线耳机的主动降噪深度为 45 dB。",
            "云雀 Air 单次续航 7 小时，配合充电盒总续航 30 小时。",
            "云雀 Air 的防水等级为 IPX4。",
        ),
        "云雀 Air 配合充电盒总共可以使用多少小时？",
        ("30小时", "三十小时", "30个小时"),
        cite=2,
    ),
    Case(
        "zh-reader",
        "zh",
        (
            "墨语 R1 电子书阅读器采用 7 英寸墨水屏。",
            "墨语 R1 支持 EPUB、PDF 和 TXT 格式。",
            "墨语 R1 签收后 15 天内可无理由退货，需保持包装完好。",
            "墨语 R1 重 185 克。",
        ),
        "墨语 R1 签收后多少天内可以无理由退货？",
        ("15天", "十五天"),
        cite=3,
    ),
    Case(
        "zh-vacuum-noise",
        "zh",
        (
            "星澜 S7 扫地机器人的最大吸力为 6000 Pa。",
            "星澜 S7 的水箱容量为 350 毫升，可拖地约 150 平方米。",
            "星澜 S7 整机保修两年。",
        ),
        "星澜 S7 工作时的噪音是多少分贝？",
        invented=r"\d+\s*(分贝|db)",
    ),
)

_REFUSAL = re.compile(
    r"not (mention|say|specif|provide|state|include|contain|give|list|available)|"
    r"(does|do|did)n[o']?t (mention|say|specif|provide|state|include|contain|give|list)|"
    r"no (information|mention|details?)|cannot (be )?(determin|answer|find)|can't (determin|answer|find)|"
    r"is(n't| not) (mentioned|specified|provided|stated|given|available)|unknown|"
    r"没有(提到|提及|说明|给出|提供|相关|关于|具体|明确|包含|涉及|信息|记载|找到)|"
    r"未(提到|提及|说明|给出|提供|包含|涉及|列出|注明)|无法(回答|确定|得知|找到|判断|提供)|"
    r"不包含|并未|不清楚|没有说|未知",
    re.IGNORECASE,
)
_CJK = re.compile(r"[\u4e00-\u9fff]")


def build_messages(case: Case, style: PromptStyle) -> list[tuple[str, str]]:
    context = "\n".join(f"[{n}] {text}" for n, text in enumerate(case.passages, start=1))
    label = ("上下文", "问题") if case.lang == "zh" else ("Context", "Question")
    user = f"{label[0]}:\n{context}\n\n{label[1]}: {case.question}"
    if case.lang in style.reminder:
        user += "\n\n" + style.reminder[case.lang]
    return [("system", style.system), ("user", user)]


@dataclass
class CaseResult:
    case_id: str
    lang: str
    answerable: bool
    answer: str
    prompt_tokens: int
    answer_tokens: int
    ttft_s: float
    total_s: float
    decode_tps: float
    correct: bool
    cited_right: bool
    language_ok: bool


@dataclass
class ModelResult:
    model: str
    prompt: str
    threads: int
    load_s: float
    peak_rss_mb: float
    cases: list[CaseResult] = field(default_factory=list)


def judge(case: Case, answer: str) -> tuple[bool, bool, bool]:
    """Return (correct, cited the right passage, answered in the question's language)."""
    squashed = re.sub(r"\s+", "", answer).lower()
    # Pasting back several passages is not an answer, even when the fact is somewhere in it.
    dumped = sum(re.sub(r"\s+", "", p).lower().rstrip(".。") in squashed for p in case.passages) >= 2
    if case.answerable:
        correct = not dumped and any(re.sub(r"\s+", "", e).lower() in squashed for e in case.expected)
        cited = not dumped and f"[{case.cite}]" in answer
    else:
        invented = bool(case.invented and re.search(case.invented, answer, re.IGNORECASE))
        correct = bool(_REFUSAL.search(answer)) and not invented
        cited = True
    cjk_share = len(_CJK.findall(answer)) / max(1, len(re.sub(r"\W", "", answer)))
    language_ok = cjk_share > 0.3 if case.lang == "zh" else cjk_share == 0.0
    return correct, cited, language_ok


def run_model(model: str, prompts: list[str], threads: int, n_ctx: int, max_tokens: int) -> list[dict[str, Any]]:
    """Load one model and run every case. Runs in a child process."""
    from ragapp.config import LLMSettings, Settings
    from ragapp.core.types import ChatTurn
    from ragapp.engine.build import load_builtins
    from ragapp.models.gguf import ensure_gguf
    from ragapp.models.llm import LLMS

    load_builtins()
    settings = Settings(llm=LLMSettings.model_validate({"local_model": model, "n_ctx": n_ctx, "threads": threads}))
    ensure_gguf(model, settings.paths.models_dir)  # assembly is a one-off; keep it out of load time
    llm = LLMS.get("llama_cpp")(settings)
    started = time.perf_counter()
    llama = llm.load()  # type: ignore[attr-defined]
    load_s = time.perf_counter() - started
    results = [ModelResult(model, prompt, threads, load_s, 0.0) for prompt in prompts]
    for result, case in ((r, c) for r in results for c in CASES):
        messages = build_messages(case, PROMPTS[result.prompt])
        turns = [ChatTurn(role, text) for role, text in messages]  # type: ignore[arg-type]
        prompt_text = "\n".join(t.content for t in turns)
        started = time.perf_counter()
        first: float | None = None
        pieces: list[str] = []
        for piece in llm.stream_chat(turns, max_tokens=max_tokens, temperature=0.0):
            if first is None:
                first = time.perf_counter() - started
            pieces.append(piece)
        total = time.perf_counter() - started
        answer = "".join(pieces).strip()
        n_tokens = len(llama.tokenize(answer.encode("utf-8"), add_bos=False)) if answer else 0
        ttft = first if first is not None else total
        decode_tps = (n_tokens - 1) / (total - ttft) if n_tokens > 1 and total > ttft else 0.0
        correct, cited, language_ok = judge(case, answer)
        result.cases.append(
            CaseResult(
                case.case_id,
                case.lang,
                case.answerable,
                answer,
                len(llama.tokenize(prompt_text.encode("utf-8"), add_bos=False)),
                n_tokens,
                ttft,
                total,
                decode_tps,
                correct,
                cited,
                language_ok,
            )
        )
    # ru_maxrss is in KiB on Linux: the peak of this child only, model pages included.
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for result in results:
        result.peak_rss_mb = peak_rss_mb
    return [asdict(r) for r in results]


def summarise(results: list[dict[str, Any]]) -> str:
    rows = [
        "| model | prompt | load s | TTFT median (best) s | decode tok/s median (best) | answer s median (max) | "
        "answerable correct | right [n] cited | refusals ok | language ok | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        cases = r["cases"]
        ans = [c for c in cases if c["answerable"]]
        unans = [c for c in cases if not c["answerable"]]
        ttft = [c["ttft_s"] for c in cases]
        total = [c["total_s"] for c in cases]
        tps = [c["decode_tps"] for c in cases if c["decode_tps"] > 0]
        rows.append(
            f"| {r['model']} | {r['prompt']} | {r['load_s']:.2f} | {statistics.median(ttft):.2f} ({min(ttft):.2f}) | "
            f"{statistics.median(tps) if tps else 0:.1f} ({max(tps, default=0):.1f}) | "
            f"{statistics.median(total):.2f} ({max(total):.2f}) | "
            f"{sum(c['correct'] for c in ans)}/{len(ans)} | {sum(c['cited_right'] for c in ans)}/{len(ans)} | "
            f"{sum(c['correct'] for c in unans)}/{len(unans)} | "
            f"{sum(c['language_ok'] for c in cases)}/{len(cases)} | {r['peak_rss_mb']:.0f} |"
        )
    return "\n".join(rows)


def per_case(results: list[dict[str, Any]]) -> str:
    rows = [
        "| model | prompt | case | prompt tok | answer tok | TTFT s | total s | tok/s | correct | cited | lang |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        for c in r["cases"]:
            rows.append(
                f"| {r['model']} | {r['prompt']} | {c['case_id']} | {c['prompt_tokens']} | {c['answer_tokens']} | "
                f"{c['ttft_s']:.2f} | {c['total_s']:.2f} | {c['decode_tps']:.1f} | "
                f"{'y' if c['correct'] else 'N'} | {'y' if c['cited_right'] else 'N'} | "
                f"{'y' if c['language_ok'] else 'N'} |"
            )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    from ragapp.models.gguf import GGUF_MODELS

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=sorted(GGUF_MODELS, reverse=True), choices=sorted(GGUF_MODELS))
    parser.add_argument("--threads", type=int, default=2, help="llama.cpp threads (production has 2 cores)")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--prompts", nargs="+", default=list(PROMPTS), choices=list(PROMPTS))
    parser.add_argument("--answers", action="store_true", help="print every answer")
    parser.add_argument("--json", type=Path, help="write all results here")
    args = parser.parse_args(argv)

    print(f"# {len(CASES)} cases, {args.threads} threads, load average {os.getloadavg()[0]:.2f}")
    results: list[dict[str, Any]] = []
    # A fresh process per model: peak RSS of one model alone, and no leftover llama.cpp state.
    spawn = multiprocessing.get_context("spawn")
    for model in args.models:
        with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
            results += pool.submit(run_model, model, args.prompts, args.threads, args.n_ctx, args.max_tokens).result()
        print(f"# {model} done", flush=True)
    print(f"# load average after: {os.getloadavg()[0]:.2f}\n")
    print(summarise(results), "\n")
    print(per_case(results))
    if args.answers:
        for r in results:
            for c in r["cases"]:
                print(f"\n--- {r['model']} · {r['prompt']} · {c['case_id']}\n{c['answer']}")
    if args.json:
        args.json.write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
