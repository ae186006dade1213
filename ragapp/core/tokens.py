"""Token counts, estimated for any backend without loading a tokenizer: Qwen-style tokenizers spend about one
token per Chinese character and one per three to four characters of English. The estimate leans high so that a
prompt it accepts fits."""

from __future__ import annotations

import math
import re

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")


def estimate_tokens(text: str) -> int:
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 3.2)
