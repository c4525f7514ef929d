"""A verl agent loop (``verl.experimental.agent_loop.AgentLoopBase``) that plays one phonebench
task per sample, multi-turn, token in / token out.

verl calls ``await loop.run(sampling_params, **dataset_fields)`` for each sample, with
``self.server_manager`` (the model servers) and ``self.tokenizer``. The loop:

1. starts the sample's task (``extra_info["task"]`` or a ``task`` field; ``seed``/``instance``
   likewise) on the server and tokenizes the dataset prompt (``raw_prompt``) plus the goal and
   the first screen;
2. asks the model (``server_manager.generate``) for a turn, decodes it and plays the action in
   it (:func:`~phonebench.adapters.text.extract_action`);
3. appends the next screen as a user turn, and repeats until the episode ends, the response
   budget is spent or ``max_turns`` is reached.

``response_mask`` is 1 for the model's tokens and 0 for the environment's, as verl's own
multi-turn loops build it; ``reward_score`` is the server's reward for the episode (0 when it
did not end). The phonebench session id is the ``request_id`` of every generate call, so verl's
sticky routing keeps a trajectory on one model server.

Registered with verl as ``phonebench_agent`` when verl is importable. Settings come from the
agent-loop config's extra keys (``base_url``, ``token``, ``format``, ``max_turns``,
``response_length``) or ``$PHONEBENCH_URL``/``$PHONEBENCH_TOKEN``; without a URL each worker
process starts one shared :class:`~phonebench.LocalServer`.

For dry runs without a model, :class:`StandInTokenizer` and :class:`ExpertServerManager`
(answers each turn with the task's reference action) stand in for verl's.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..client import AsyncClient
from ..server import shared_server
from .text import SYSTEM_PROMPT, extract_action, first_message, render_step

__all__ = ["AgentLoopOutput", "ExpertServerManager", "PhonebenchAgentLoop", "StandInTokenizer"]

try:  # verl is not a dependency: subclass and register with it when it is installed
    from verl.experimental.agent_loop.agent_loop import AgentLoopBase as _Base
    from verl.experimental.agent_loop.agent_loop import AgentLoopOutput
    from verl.experimental.agent_loop.agent_loop import register as _register

    HAVE_VERL = True
except ImportError:  # pragma: no cover - exercised when verl is absent (as in our tests)
    HAVE_VERL = False

    @dataclass
    class AgentLoopOutput:  # type: ignore[no-redef]
        """verl's ``AgentLoopOutput`` fields, for use without verl."""

        prompt_ids: list[int]
        response_ids: list[int]
        response_mask: list[int]
        response_logprobs: list[float] | None = None
        multi_modal_data: dict[str, Any] | None = None
        reward_score: float | None = None
        num_turns: int = 0
        metrics: dict[str, Any] = field(default_factory=dict)
        extra_fields: dict[str, Any] = field(default_factory=dict)

    class _Base:  # type: ignore[no-redef]
        """verl's ``AgentLoopBase`` constructor, for use without verl."""

        def __init__(
            self,
            trainer_config: Any = None,
            server_manager: Any = None,
            tokenizer: Any = None,
            processor: Any = None,
            **kwargs: Any,
        ) -> None:
            self.config = getattr(trainer_config, "config", trainer_config)
            self.server_manager = server_manager
            self.tokenizer = tokenizer
            self.processor = processor

    def _register(name: str) -> Any:
        return lambda cls: cls


def _tokens(output: Any) -> tuple[list[int], list[float] | None]:
    """Token ids (and log-probs) from ``generate``: a ``TokenOutput`` in current verl, a plain
    list of ids in older versions."""
    ids = getattr(output, "token_ids", output)
    logprobs = getattr(output, "log_probs", None)
    return list(ids), (list(logprobs) if logprobs is not None else None)


def _field(kwargs: Mapping[str, Any], key: str) -> Any:
    extra = kwargs.get("extra_info")
    if isinstance(extra, Mapping) and extra.get(key) is not None:
        return extra[key]
    return kwargs.get(key)


def _config_response_length(config: Any) -> int | None:
    try:
        return int(config.actor_rollout_ref.rollout.response_length)
    except (AttributeError, TypeError, ValueError):
        return None


@_register("phonebench_agent")
class PhonebenchAgentLoop(_Base):  # type: ignore[misc]
    """One phonebench episode per sample, as a verl multi-turn agent loop."""

    def __init__(
        self,
        trainer_config: Any = None,
        server_manager: Any = None,
        tokenizer: Any = None,
        processor: Any = None,
        *,
        base_url: str | None = None,
        token: str | None = None,
        format: str | None = None,
        max_turns: int | None = None,
        response_length: int | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(trainer_config, server_manager, tokenizer, processor, **kwargs)
        self.base_url = base_url or os.environ.get("PHONEBENCH_URL")
        self.token = token
        self.format = format
        self.max_turns = max_turns
        self.response_length = response_length or _config_response_length(getattr(self, "config", None))
        self.system_prompt = system_prompt

    async def _client(self) -> AsyncClient:
        if self.base_url is None:
            # Starting the server blocks for a moment: keep the event loop free meanwhile.
            server = await asyncio.get_running_loop().run_in_executor(None, shared_server)
            self.base_url, self.token = server.url, server.token
        return AsyncClient(self.base_url, self.token)

    def _encode(self, messages: list[dict[str, Any]]) -> list[int]:
        ids = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        # A processor returns a batch of one.
        if len(ids) == 1 and isinstance(ids[0], list):
            ids = ids[0]
        return list(ids)

    def _encode_turn(self, content: str) -> list[int]:
        """One environment turn's tokens, without the chat template's leading system block
        (the way verl's tool loop strips it: encode ``[{}]`` and drop that prefix)."""
        ids = self._encode([{"role": "user", "content": content}])
        prefix = self.tokenizer.apply_chat_template([{}], add_generation_prompt=False, tokenize=True)
        if len(prefix) == 1 and isinstance(prefix[0], list):
            prefix = prefix[0]
        prefix = list(prefix)
        return ids[len(prefix) :] if prefix and ids[: len(prefix)] == prefix else ids

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        """Play the sample's task; return the trajectory's tokens, mask and reward."""
        task = _field(kwargs, "task")
        if task is None:
            raise ValueError("a phonebench sample needs a task: extra_info['task'] or a `task` field")
        client = await self._client()
        try:
            return await self._play(client, task, sampling_params, kwargs)
        finally:
            await client.close()

    async def _play(
        self, client: AsyncClient, task: str, sampling_params: dict[str, Any], kwargs: Mapping[str, Any]
    ) -> AgentLoopOutput:
        result = await client.reset(
            task, _field(kwargs, "seed"), _field(kwargs, "instance"), None, None, format=self.format
        )
        session = result.session_id
        try:
            messages = [dict(m) for m in (kwargs.get("raw_prompt") or [])]
            if not messages and (self.system_prompt is None or self.system_prompt):
                messages.append({"role": "system", "content": self.system_prompt or SYSTEM_PROMPT})
            content = first_message(result)
            if messages and messages[-1].get("role") == "user":
                messages[-1]["content"] = f"{messages[-1]['content']}\n\n{content}"
            else:
                messages.append({"role": "user", "content": content})
            prompt_ids = self._encode(messages)

            response_ids: list[int] = []
            response_mask: list[int] = []
            logprobs: list[float] = []
            have_logprobs = True
            assistant_turns = user_turns = 0
            limit = self.response_length
            while True:
                out = await self.server_manager.generate(
                    request_id=session, prompt_ids=prompt_ids + response_ids, sampling_params=sampling_params
                )
                ids, lps = _tokens(out)
                response_ids += ids
                response_mask += [1] * len(ids)
                if lps is None or len(lps) != len(ids):
                    have_logprobs = False
                else:
                    logprobs += lps
                assistant_turns += 1
                if limit is not None and len(response_ids) >= limit:
                    break
                text = self.tokenizer.decode(ids, skip_special_tokens=True)
                result = await client.step(session, extract_action(text))
                if result.done or (self.max_turns is not None and assistant_turns >= self.max_turns):
                    break
                turn = self._encode_turn(render_step(result))
                # The last turn must be the model's, as in verl's own loops (GAE reads the reward
                # at its last token): stop before an environment turn that would not fit.
                if limit is not None and len(response_ids) + len(turn) >= limit:
                    break
                response_ids += turn
                response_mask += [0] * len(turn)
                if have_logprobs:
                    logprobs += [0.0] * len(turn)
                user_turns += 1
        finally:
            try:
                await client.close_session(session)
            except Exception:  # noqa: BLE001 - already gone: nothing to free
                pass

        if limit is not None:
            response_ids, response_mask, logprobs = response_ids[:limit], response_mask[:limit], logprobs[:limit]
        verdict = result.verdict or {}
        return AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=response_ids,
            response_mask=response_mask,
            response_logprobs=logprobs if have_logprobs and logprobs else None,
            reward_score=float(result.reward) if result.done else 0.0,
            num_turns=assistant_turns + user_turns + 1,
            metrics={},
            extra_fields={
                "phonebench": {
                    "task_id": task,
                    "session_id": session,
                    "done": result.done,
                    "truncated": result.truncated,
                    "success": bool(verdict.get("success")),
                    "acp": verdict.get("acp"),
                    "steps": result.info.get("step_count"),
                }
            },
        )


# ---------------------------------------------------------------------------------------------
# Stand-ins for dry runs and tests (no model, no transformers).


class StandInTokenizer:
    """A byte-level tokenizer with a chat template, shaped like a Hugging Face tokenizer.

    Ids 0-255 are UTF-8 bytes; the chat template's markers are special ids from 256. Like most
    chat models' templates, it opens with a default system block when the conversation has
    none, so ``apply_chat_template([{}])`` is that block alone (what verl strips from turns).
    """

    SPECIAL = ("<|system|>", "<|user|>", "<|assistant|>", "<|tool|>", "<|end|>", "<|eos|>")
    DEFAULT_SYSTEM = "You are a helpful assistant."

    def __init__(self) -> None:
        self._special = {name: 256 + i for i, name in enumerate(self.SPECIAL)}
        self.eos_token_id = self._special["<|eos|>"]

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        out, chunk = [], bytearray()
        for i in ids:
            if i < 256:
                chunk.append(i)
                continue
            out.append(chunk.decode("utf-8", "replace"))
            chunk = bytearray()
            if not skip_special_tokens:
                out.append(self.SPECIAL[i - 256])
        out.append(chunk.decode("utf-8", "replace"))
        return "".join(out)

    def _block(self, role: str, content: str) -> list[int]:
        return [self._special[f"<|{role}|>"], *self.encode(content), self._special["<|end|>"]]

    def apply_chat_template(
        self,
        messages: Sequence[Mapping[str, Any]],
        add_generation_prompt: bool = False,
        tokenize: bool = True,
        **_: Any,
    ) -> Any:
        ids: list[int] = []
        if not messages or messages[0].get("role") != "system":
            ids += self._block("system", self.DEFAULT_SYSTEM)
        for m in messages:
            if "role" in m:  # a role-less message (verl's `[{}]` probe) renders as nothing
                ids += self._block(str(m["role"]), str(m.get("content", "")))
        if add_generation_prompt:
            ids.append(self._special["<|assistant|>"])
        return ids if tokenize else self.decode(ids)


@dataclass
class _TokenOutput:
    token_ids: list[int]
    log_probs: list[float] | None = None


class ExpertServerManager:
    """A model-server manager that answers each turn with the task's reference action.

    ``generate(request_id=SESSION, ...)`` asks the phonebench server's `/expert` for that
    session's next action and returns ``"Reason: ...\\nAction: {json}"`` as tokens (the
    agent loop uses the session id as request id). For dry runs of an agent loop and tests.
    """

    def __init__(self, tokenizer: StandInTokenizer, base_url: str, token: str | None = None) -> None:
        self.tokenizer = tokenizer
        self.client = AsyncClient(base_url, token)
        self.calls = 0

    async def generate(
        self,
        request_id: str,
        *,
        prompt_ids: list[int],
        sampling_params: dict[str, Any],
        image_data: Any = None,
    ) -> _TokenOutput:
        self.calls += 1
        reply = await self.client.expert(request_id)
        action = reply.get("action") or {"action": "finish", "status": "infeasible"}
        text = f"Reason: the reference solution's next step.\nAction: {json.dumps(action)}"
        ids = self.tokenizer.encode(text) + [self.tokenizer.eos_token_id]
        return _TokenOutput(ids, [0.0] * len(ids))

    async def close(self) -> None:
        await self.client.close()
