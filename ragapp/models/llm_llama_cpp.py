"""Local chat model: a GGUF file run in-process by llama.cpp (``llama-cpp-python``).

The model loads once, on first use, and is shared by every request. A llama.cpp context holds one
KV cache and is not thread-safe, so generations are serialised: concurrent users queue.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ragapp.config import LLMSettings, Settings
from ragapp.core.errors import LLMError, ModelError
from ragapp.core.types import ChatTurn
from ragapp.models.gguf import ensure_gguf
from ragapp.models.llama_cpu_check import check_llama_runs
from ragapp.models.llm import LLMS, ScoredPiece
from ragapp.models.model_queue import ModelQueue

if TYPE_CHECKING:
    from llama_cpp import Llama

logger = logging.getLogger(__name__)

_INSTALL_HINT = (
    "The llama_cpp backend needs llama-cpp-python: run `make setup` (it builds "
    "llama-cpp-python==0.3.36 from source, ~10 min, needs gcc, g++ and cmake), "
    "or use an OpenAI-compatible server with RAGAPP_LLM__BACKEND=openai."
)


@dataclass(frozen=True)
class ModelCounters:
    prompt_tokens: int  # read (prefilled): a prompt prefix kept from the previous call is not read again
    prompt_s: float
    generated_tokens: int
    generated_s: float


# Extra contexts kept at once: the intent classifier's, the answers' and the selections' (``qa.select``) in English
# and in Chinese, the agent's decisions. Each is a ``Llama`` of its own over the weights the first one loaded
# (``_weights_of``): for the packaged 1.5B at 4,096 one costs about 160 MB of private memory (its 117 MB KV cache
# and buffers), also where llama.cpp copies the weights into its repacked layout (``_repacks``), which a ``Llama``
# loading the file again would copy once more (about 0.75 GB).
_MAX_SLOTS = 6


class LlamaCppLLM:
    """A packaged (or user-supplied) GGUF model served by llama.cpp in this process."""

    holds_grammar = True  # ``stream_chat``'s grammar is enforced while sampling (``models.llm.holds_grammar``)

    def __init__(self, llm: LLMSettings, models_dir: Path) -> None:
        self._settings = llm
        self._models_dir = models_dir
        self._llama: Llama | None = None
        # Extra contexts for calls that name a ``prefix_slot``: each keeps its own long, fixed prompt prefix
        # (the intent classifier's candidate list) in its KV cache, so the answer calls in between do not
        # evict it. Each is another ``Llama`` over the same weights: see ``_MAX_SLOTS`` for what one costs.
        self._slots: dict[str, Llama] = {}
        # One queue for loading and generating: on 2 cores, two generations at once only slow each other, so
        # calls take turns in arrival order, and a waiting call hears its place in line.
        self._lock = ModelQueue()

    @property
    def name(self) -> str:
        model = self._settings.gguf_path.stem if self._settings.gguf_path else self._settings.local_model
        return f"llama.cpp · {model}"

    def counters(self) -> ModelCounters:
        """Prompt tokens read and tokens generated so far over this model's contexts, and the seconds each took
        (llama.cpp's own counters): what benchmarks divide to get prefill and generation speed."""
        read = generated = 0
        read_s = generated_s = 0.0
        try:
            import llama_cpp
        except ImportError:
            return ModelCounters(0, 0.0, 0, 0.0)
        for llama in [self._llama, *self._slots.values()]:
            if llama is None:
                continue
            data = llama_cpp.llama_perf_context(llama._ctx.ctx)  # private: no public handle to the context
            read, read_s = read + data.n_p_eval, read_s + data.t_p_eval_ms / 1000
            generated, generated_s = generated + data.n_eval, generated_s + data.t_eval_ms / 1000
        return ModelCounters(read, read_s, generated, generated_s)

    def load(self) -> Llama:
        """Load the model if it is not loaded yet, and return it (the same object every time)."""
        if self._llama is not None:
            return self._llama
        if not self._lock.acquire(self._settings.timeout_s):
            raise LLMError("The local model is busy loading; try again in a moment.")
        try:
            return self._load_locked()
        finally:
            self._lock.release()

    def stream_chat(
        self,
        messages: list[ChatTurn],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        json: bool = False,
        prefix_slot: str | None = None,
        grammar: str | None = None,
        scores: bool = False,
    ) -> Iterator[str]:
        """Yield text deltas of the reply, formatted with the GGUF's own chat template; held to ``grammar``
        (GBNF) when given; with ``scores``, each a ``ScoredPiece`` (``StepScores``)."""
        # Wait at most timeout_s for another user's answer to finish rather than hang forever.
        if not self._lock.acquire(self._settings.timeout_s):
            raise LLMError(
                f"The local model is still busy with another answer after {self._settings.timeout_s:.0f} s; "
                "try again, or use a server backend for several users (RAGAPP_LLM__BACKEND=openai)."
            )
        # The lock is held until the generator finishes or is closed, so a consumer that stops
        # early (the user pressed stop) must close() it; garbage collection does so in CPython.
        try:
            llama = self._load_locked() if prefix_slot is None else self._slot_locked(prefix_slot)
            steps = StepScores(llama) if scores else None
            stream = self._start(llama, messages, max_tokens, temperature, json, grammar, steps)
            try:
                for chunk in stream:
                    choices = chunk.get("choices") or []
                    if not choices:
                        continue
                    text = choices[0].get("delta", {}).get("content")
                    if text:
                        yield text if steps is None else ScoredPiece(text, steps.last)
            except LLMError:
                raise
            except Exception as exc:
                raise LLMError(f"The local model failed while answering: {exc}") from exc
            finally:
                # Closing the inner generator lets llama-cpp-python finish its bookkeeping.
                close = getattr(stream, "close", None)
                if close is not None:
                    close()
        finally:
            self._lock.release()

    def _start(
        self,
        llama: Llama,
        messages: list[ChatTurn],
        max_tokens: int | None,
        temperature: float | None,
        json: bool = False,
        grammar: str | None = None,
        steps: StepScores | None = None,
    ) -> Iterator[dict[str, Any]]:
        # A JSON grammar makes the small local models reply with parseable JSON (MODELS.md: 3/3 valid).
        extra: dict[str, Any] = {"response_format": {"type": "json_object"}} if json else {}
        if grammar is not None:
            extra["grammar"] = _grammar(grammar)
        if steps is not None:
            extra["logits_processor"] = [steps]
        try:
            result = llama.create_chat_completion(
                messages=cast(Any, [{"role": m.role, "content": m.content} for m in messages]),
                max_tokens=max_tokens if max_tokens is not None else self._settings.max_tokens,
                temperature=temperature if temperature is not None else self._settings.temperature,
                seed=self._settings.seed,
                stream=True,
                **extra,
            )
        except ValueError as exc:
            # llama.cpp raises ValueError when the prompt does not fit the context window.
            raise LLMError(
                f"The question and its context do not fit the local model's window "
                f"({self._settings.n_ctx} tokens): {exc}. Raise RAGAPP_LLM__N_CTX or lower "
                "RAGAPP_RETRIEVAL__CONTEXT_TOP_K."
            ) from exc
        except Exception as exc:
            raise LLMError(f"The local model failed to start answering: {exc}") from exc
        return cast(Iterator[dict[str, Any]], result)

    def _slot_locked(self, slot: str) -> Llama:
        if slot not in self._slots:
            self._load_locked()  # fails with the clear messages first
            if len(self._slots) >= _MAX_SLOTS:
                self._slots.pop(next(iter(self._slots)))  # the oldest slot goes; its context is freed
            self._slots[slot] = self._new_context(self._model_path(), weights_of=self._llama)
        return self._slots[slot]

    def _load_locked(self) -> Llama:
        if self._llama is not None:
            return self._llama
        self._llama = self._new_context(self._model_path())
        return self._llama

    def _new_context(self, path: Path, weights_of: Llama | None = None) -> Llama:
        """A ``Llama`` for ``path``: loading its weights, or over those ``weights_of`` loaded."""
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise LLMError(_INSTALL_HINT) from exc
        threads = self._settings.threads or os.cpu_count() or 1
        started = time.monotonic()
        try:
            with _model_params(use_extra_bufts=_repacks()), _weights_of(weights_of):
                llama = Llama(
                    model_path=str(path),
                    n_ctx=self._settings.n_ctx,
                    n_threads=threads,
                    n_threads_batch=threads,
                    seed=self._settings.seed,
                    verbose=False,
                )
        except Exception as exc:
            raise LLMError(
                f"llama.cpp could not load {path}: {exc}. If the file is damaged, delete it and run "
                "`python -m ragapp.models.gguf`; if memory is short, lower RAGAPP_LLM__N_CTX."
            ) from exc
        logger.info(
            "Loaded %s (%d threads, n_ctx=%d) in %.1f s",
            path.name,
            threads,
            self._settings.n_ctx,
            time.monotonic() - started,
        )
        return llama

    def _model_path(self) -> Path:
        path = self._settings.gguf_path
        if path is not None:
            if not path.is_file():
                raise LLMError(
                    f"RAGAPP_LLM__GGUF_PATH points to {path}, which is not a file. Fix the path or "
                    "unset it to use the packaged model."
                )
            return path
        try:
            return ensure_gguf(self._settings.local_model, self._models_dir)
        except LLMError:
            raise
        except ModelError as exc:
            raise LLMError(str(exc)) from exc


def _repacks() -> bool:
    """Whether llama.cpp copies the weights into its repacked layout (its "extra buffer types", on by default).
    Not in an AVX-512 build: there the repacked weights read prompts at 0.67-0.69x the speed of the plain ones (101
    against 150 tokens a second on 2 cores, 54 against 78 on one), generate 1.14-1.3x as fast, and cost about 600 MB
    a context; prompts are most of an answer's time here. In an AVX2 build they read as fast and generate 1.2x as
    fast, so llama.cpp's default stands there (docs/lab-log.md, "What a context costs")."""
    import llama_cpp

    return "AVX512 = 1" not in llama_cpp.llama_print_system_info().decode(errors="replace")


@contextmanager
def _model_params(**fields: Any) -> Iterator[None]:
    """``Llama(...)`` built with these model parameters. Written here because llama-cpp-python takes no
    ``use_extra_bufts``: its constructor starts from ``llama_model_default_params()``, which is wrapped while it
    runs (contexts are made under the model's queue, one at a time; another made meanwhile gets the same)."""
    from llama_cpp import llama_cpp as low

    default = low.llama_model_default_params

    def params() -> Any:
        made = default()
        for name, value in fields.items():
            setattr(made, name, value)
        return made

    low.llama_model_default_params = params
    try:
        yield
    finally:
        low.llama_model_default_params = default


@contextmanager
def _weights_of(owner: Llama | None) -> Iterator[None]:
    """``Llama(...)`` built over the weights ``owner`` loaded (its ``llama_model``), where llama.cpp has one model
    serve several contexts; None: over weights of its own. Written here because llama-cpp-python's ``Llama``
    loads a model for each context it makes: its loader is wrapped while it runs (under the model's queue, as
    ``_model_params``). The context keeps ``owner`` alive, and closing it leaves the weights to ``owner``."""
    if owner is None:
        yield
        return
    from llama_cpp import _internals as internals

    loader = internals.LlamaModel
    shared = owner._model  # private: llama-cpp-python has no public handle to a Llama's model

    def borrowed(**_ignored: Any) -> Any:
        model: Any = object.__new__(loader)
        model.__dict__.update(shared.__dict__)
        model._exit_stack = ExitStack()  # its close() frees nothing: the weights stay the owner's
        model.sampler, model.custom_samplers = None, []
        model.owner = owner  # the owner (and its weights) outlive every context over them
        return model

    setattr(internals, "LlamaModel", borrowed)  # noqa: B010 (a class replaced by a function)
    try:
        yield
    finally:
        setattr(internals, "LlamaModel", loader)  # noqa: B010


TOP_TOKENS = 20  # the likeliest tokens kept per step with ``scores``


class StepScores:
    """A llama.cpp logits processor that only watches: at each step it keeps the ``TOP_TOKENS`` likeliest
    tokens with their log-probabilities (``last``), from the raw logits, before a grammar narrows them.
    llama.cpp gives log-probabilities only with ``logits_all`` (a logits row per prompt token: ~2.5 GB at
    4,096 tokens for this vocabulary); the last step's row, read here, costs ~1 ms per token."""

    def __init__(self, llama: Llama) -> None:
        self._llama = llama
        self.last: tuple[tuple[str, float], ...] = ()

    def __call__(self, _input_ids: Any, logits: Any) -> Any:
        import numpy as np

        row = np.asarray(logits, dtype=np.float64)
        peak = row.max()
        total = peak + np.log(np.exp(row - peak).sum())
        top = np.argpartition(-row, TOP_TOKENS)[:TOP_TOKENS]
        top = top[np.argsort(-row[top])]
        self.last = tuple(
            (self._llama.detokenize([int(t)]).decode("utf-8", errors="replace"), float(row[t] - total)) for t in top
        )
        return logits


@functools.lru_cache(maxsize=32)
def _grammar(text: str) -> Any:
    """A GBNF grammar compiled once per text (the same candidates asked again, a part of the same question)."""
    from llama_cpp import LlamaGrammar

    try:
        return LlamaGrammar.from_string(text, verbose=False)
    except Exception as exc:  # llama.cpp rejects the grammar: a caller's bug, said as the model's failure
        raise LLMError(f"The local model could not read the reply's grammar: {exc}") from exc


@LLMS.register("llama_cpp")
def create_llama_cpp_llm(settings: Settings) -> LlamaCppLLM:
    """Build the local backend; the model itself loads on first use."""
    # Fail at start-up, not at the first question, when the runtime is missing.
    if importlib.util.find_spec("llama_cpp") is None:
        raise LLMError(_INSTALL_HINT)
    # ... and when the library was built for instructions this CPU lacks: it would die by SIGILL at the first
    # question, taking the server with it (the verdict is kept in the state dir, so this costs once).
    check_llama_runs(settings.paths.state_dir)
    return LlamaCppLLM(settings.llm, settings.paths.models_dir)
