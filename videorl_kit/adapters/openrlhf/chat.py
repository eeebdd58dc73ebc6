"""Where the model's answer starts in the text OpenRLHF hands the reward function.

OpenRLHF passes ``query`` (prompt and response token ids decoded together, special tokens
kept) and ``prompt`` (the chat-templated prompt). For image and video prompts the query holds
the processor's *expanded* placeholders (one ``<|image_pad|>`` per patch) while the prompt
holds one per item, so ``query[len(prompt):]`` silently returns the whole query. The
response is instead found at the chat template's assistant header: the prompt ends with
it, so the response starts after the query's header of the same rank as the prompt's last
one. Counting in the prompt (not taking the query's last header) keeps a response that
writes a header of its own from moving the split.

Example:
    >>> markers = ChatMarkers("<|im_start|>assistant\\n", ("<|im_end|>", "<|endoftext|>"))
    >>> prompt = "<|im_start|>user\\n<|image_pad|>Count.<|im_end|>\\n<|im_start|>assistant\\n"
    >>> query = prompt.replace("<|image_pad|>", "<|image_pad|>" * 4)  # what the processor expands
    >>> query += "<answer>3</answer><|im_end|>"
    >>> split_response(query, prompt, markers)
    '<answer>3</answer>'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class ResponseSplitError(ValueError):
    """The query does not contain the prompt's assistant header."""


@dataclass(frozen=True)
class ChatMarkers:
    """The assistant header a generation prompt ends with and the tokens that end a turn."""

    assistant_header: str
    end_markers: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``tasks.resolved.json``."""
        return {"assistant_header": self.assistant_header, "end_markers": list(self.end_markers)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChatMarkers:
        """Inverse of :meth:`to_dict`.

        Example:
            >>> ChatMarkers.from_dict({"assistant_header": "A:", "end_markers": ["</s>"]})
            ChatMarkers(assistant_header='A:', end_markers=('</s>',))
        """
        return cls(str(data["assistant_header"]), tuple(str(m) for m in data["end_markers"]))


def chat_markers(processor: Any) -> ChatMarkers:
    """The markers of a tokenizer's or processor's chat template.

    The header is what ``add_generation_prompt=True`` appends to a conversation; the end
    markers are the text the template writes right after an assistant message, plus the
    tokenizer's eos and pad tokens.

    Example:
        >>> class Template:  # a stand-in with a Qwen-style template
        ...     eos_token, pad_token = "<|im_end|>", "<|endoftext|>"
        ...     def apply_chat_template(self, messages, tokenize, add_generation_prompt):
        ...         text = "".join(f"<|im_start|>{m['role']}\\n{m['content']}<|im_end|>\\n"
        ...                        for m in messages)
        ...         return text + ("<|im_start|>assistant\\n" if add_generation_prompt else "")
        >>> markers = chat_markers(Template())
        >>> markers.assistant_header, markers.end_markers
        ('<|im_start|>assistant\\n', ('<|im_end|>', '<|endoftext|>'))
    """
    user = [{"role": "user", "content": "Q"}]
    without = processor.apply_chat_template(user, tokenize=False, add_generation_prompt=False)
    with_header = processor.apply_chat_template(user, tokenize=False, add_generation_prompt=True)
    if not with_header.startswith(without) or with_header == without:
        raise ValueError("the chat template does not append an assistant header to a prompt")
    header = with_header[len(without) :]
    tokenizer = getattr(processor, "tokenizer", processor)
    candidates: list[str] = []
    answered = processor.apply_chat_template(
        [*user, {"role": "assistant", "content": "\x00"}],
        tokenize=False,
        add_generation_prompt=False,
    )
    after = answered.rsplit("\x00", 1)[-1].strip() if "\x00" in answered else ""
    candidates += [
        after,
        getattr(tokenizer, "eos_token", None),
        getattr(tokenizer, "pad_token", None),
    ]
    ends = tuple(dict.fromkeys(c for c in candidates if isinstance(c, str) and c))
    return ChatMarkers(header, ends)


def split_response(query: str, prompt: str, markers: ChatMarkers) -> str:
    """The response part of ``query``, without the end-of-turn markers it ends with.

    Raises :class:`ResponseSplitError` when the query holds fewer assistant headers than the
    prompt (a template mismatch), or when the prompt has none and the query does not start
    with the prompt.

    Example:
        >>> m = ChatMarkers("A:", ("</s>",))
        >>> split_response("Q: 1+1? A: 2 A: 3</s></s>", "Q: 1+1? A:", m)
        ' 2 A: 3'
        >>> try:
        ...     split_response("Q: 1+1?", "Q: 1+1? A:", m)
        ... except ResponseSplitError as exc:
        ...     print(exc)
        the query holds 0 assistant headers ('A:') but its prompt 1
    """
    header = markers.assistant_header
    rank = prompt.count(header)
    if rank == 0:
        if not query.startswith(prompt):
            raise ResponseSplitError(
                f"the prompt holds no assistant header ({header!r}) and the query does not start "
                "with the prompt"
            )
        response = query[len(prompt) :]
    else:
        start = -1
        for _ in range(rank):
            start = query.find(header, start + 1)
            if start < 0:
                raise ResponseSplitError(
                    f"the query holds {query.count(header)} assistant headers ({header!r}) but "
                    f"its prompt {rank}"
                )
        response = query[start + len(header) :]
    trimmed = True
    while trimmed:
        trimmed = False
        for marker in markers.end_markers:
            if response.endswith(marker):
                response, trimmed = response[: -len(marker)], True
    return response
