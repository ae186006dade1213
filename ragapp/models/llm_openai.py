"""Any OpenAI-compatible chat endpoint: Ollama, vLLM, llama.cpp server, DashScope, DeepSeek, OpenAI."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, cast

from ragapp.config import LLMSettings, Settings
from ragapp.core.errors import LLMError
from ragapp.core.types import ChatTurn, ToolCall
from ragapp.models.llm import LLMS, ToolReply

if TYPE_CHECKING:
    from openai import OpenAI

logger = logging.getLogger(__name__)

_INSTALL_HINT = "The openai backend needs the openai package: run `make setup` (pip install openai==3.57.0)."
# One retry covers a dropped keep-alive connection; more would keep a user waiting on a dead server.
_MAX_RETRIES = 1
# A server that does not accept a connection within this long is not coming; fail fast.
_CONNECT_TIMEOUT_S = 10.0


class OpenAICompatibleLLM:
    """Streams chat completions from an OpenAI-compatible HTTP endpoint."""

    def __init__(self, llm: LLMSettings, client: OpenAI | None = None) -> None:
        self._settings = llm
        self._client = client if client is not None else _make_client(llm)

    @property
    def name(self) -> str:
        return f"openai · {self._settings.model}"

    @property
    def base_url(self) -> str:
        return self._settings.base_url

    def stream_chat(
        self,
        messages: list[ChatTurn],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        json: bool = False,
        prefix_slot: str | None = None,  # servers such as vLLM and llama.cpp cache prompt prefixes themselves
        grammar: str | None = None,  # no common way to send one: the reply is parsed like a free one
        scores: bool = False,  # plain pieces: callers do without the scores
    ) -> Iterator[str]:
        """Yield text deltas of the reply; failures become ``LLMError`` naming the endpoint."""
        import openai

        extra: dict[str, Any] = {}
        if json and self._settings.json_mode:
            extra["response_format"] = {"type": "json_object"}
        try:
            stream = self._client.chat.completions.create(
                model=self._settings.model,
                messages=cast(Any, wire_messages(messages)),
                max_tokens=max_tokens if max_tokens is not None else self._settings.max_tokens,
                temperature=temperature if temperature is not None else self._settings.temperature,
                stream=True,
                **extra,
            )
            try:
                for chunk in stream:
                    # Some servers send a final usage-only chunk with no choices.
                    if chunk.choices and chunk.choices[0].delta.content:
                        yield chunk.choices[0].delta.content
            finally:
                stream.close()
        except openai.OpenAIError as exc:
            raise LLMError(self._explain(exc)) from exc

    def complete_with_tools(
        self,
        messages: list[ChatTurn],
        tools: list[dict[str, Any]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> ToolReply:
        """One reply with native function calling (``tools`` in the OpenAI format)."""
        import openai

        try:
            response = self._client.chat.completions.create(
                model=self._settings.model,
                messages=cast(Any, wire_messages(messages)),
                tools=cast(Any, tools),
                max_tokens=max_tokens if max_tokens is not None else self._settings.max_tokens,
                temperature=temperature if temperature is not None else self._settings.temperature,
            )
        except openai.OpenAIError as exc:
            raise LLMError(self._explain(exc)) from exc
        if not response.choices:
            raise LLMError(f"The model server at {self._settings.base_url} returned no choices.")
        message = response.choices[0].message
        calls = []
        for call in message.tool_calls or []:
            function = getattr(call, "function", None)
            if function is None:
                continue
            try:
                arguments = json.loads(function.arguments or "{}")
            except ValueError:
                arguments = {"_unparsed": function.arguments}  # the agent reports it back as invalid
            calls.append(ToolCall(function.name, arguments if isinstance(arguments, dict) else {}, call.id))
        return ToolReply(message.content or "", tuple(calls))

    def _explain(self, exc: Exception) -> str:
        """A message that names the endpoint and what to check."""
        import openai

        url = self._settings.base_url
        model = self._settings.model
        if isinstance(exc, openai.APITimeoutError):
            return (
                f"The model server at {url} did not answer within {self._settings.timeout_s:.0f} s. "
                "Is it overloaded or still loading the model? Raise RAGAPP_LLM__TIMEOUT_S if it is just slow."
            )
        if isinstance(exc, openai.APIConnectionError):
            return (
                f"Cannot reach the model server at {url}. Is it running (e.g. `ollama serve`)? "
                "Check RAGAPP_LLM__BASE_URL, or switch to the local model with RAGAPP_LLM__BACKEND=llama_cpp."
            )
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            return f"The model server at {url} refused the API key (HTTP {exc.status_code}). Set RAGAPP_LLM__API_KEY."
        if isinstance(exc, openai.NotFoundError):
            return (
                f"The model server at {url} does not know model {model!r} or the path is wrong "
                "(HTTP 404). Check RAGAPP_LLM__MODEL (for Ollama: `ollama pull` it first) and that "
                "RAGAPP_LLM__BASE_URL ends in /v1."
            )
        if isinstance(exc, openai.RateLimitError):
            return f"The model server at {url} is rate-limiting requests (HTTP 429); wait and try again."
        if isinstance(exc, openai.APIStatusError):
            return f"The model server at {url} returned HTTP {exc.status_code} for model {model!r}: {exc.message}"
        return f"The model server at {url} failed: {exc}"


def wire_messages(messages: list[ChatTurn]) -> list[dict[str, Any]]:
    """Chat turns in the OpenAI format, tool calls and tool results included."""
    out: list[dict[str, Any]] = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            item["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)},
                }
                for c in m.tool_calls
            ]
        if m.tool_call_id is not None:
            item["tool_call_id"] = m.tool_call_id
        out.append(item)
    return out


def _make_client(llm: LLMSettings) -> OpenAI:
    try:
        import openai
    except ImportError as exc:
        raise LLMError(_INSTALL_HINT) from exc
    # Local servers ignore the key, but the client refuses an empty one; a remote server that
    # wants a real key answers 401, which _explain turns into "set RAGAPP_LLM__API_KEY".
    api_key = llm.api_key.get_secret_value() or "not-needed"
    return openai.OpenAI(
        base_url=llm.base_url,
        api_key=api_key,
        timeout=openai.Timeout(llm.timeout_s, connect=min(_CONNECT_TIMEOUT_S, llm.timeout_s)),
        max_retries=_MAX_RETRIES,
    )


@LLMS.register("openai")
def create_openai_llm(settings: Settings) -> OpenAICompatibleLLM:
    """Build the HTTP backend; nothing is contacted until the first question."""
    return OpenAICompatibleLLM(settings.llm)
