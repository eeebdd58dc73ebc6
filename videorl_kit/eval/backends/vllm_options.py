"""Options of the ``vllm`` eval backend: vLLM engine arguments under vLLM's own names.

``videorl-kit eval --backend vllm --model-args key=value,...`` (lm-evaluation-harness's
``--model_args`` form) sets them; :func:`parse_model_args` reads that string and reports every
unknown key and bad value at once. Their defaults depend on where vLLM runs
(:meth:`VllmOptions.engine_kwargs`): on a GPU, vLLM's own (``gpu_memory_utilization`` 0.9,
compiled CUDA graphs) and tensor parallelism over every visible GPU; on the CPU, where
``gpu_memory_utilization`` would be a share of the machine's RAM, a KV cache of
:data:`CPU_KV_CACHE_BYTES` and eager mode (no minutes-long compilation for a small run).
``VLLM_CPU_KVCACHE_SPACE`` (GiB), vLLM's own variable, still wins on the CPU.

Example:
    >>> parse_model_args("tensor_parallel_size=2,max_model_len=32768").given()
    {'tensor_parallel_size': 2, 'max_model_len': 32768}
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from videorl_kit.core.errors import UserError

CPU_KV_CACHE_BYTES = 2**30
"""KV cache vLLM reserves on the CPU unless told otherwise (1 GiB: tens of thousands of tokens
of a 7B model, millions of the tiny test model's)."""

MAX_CONCURRENCY = 64
"""Requests in flight at once unless ``max_concurrency`` says otherwise."""


@dataclass(frozen=True)
class VllmOptions:
    """Options of the vllm backend: vLLM engine arguments under vLLM's names, and
    ``max_concurrency`` (requests in flight). ``None`` is the platform's default.

    Example:
        >>> VllmOptions(max_model_len=8192).given()
        {'max_model_len': 8192}
    """

    tensor_parallel_size: int | None = None
    max_model_len: int | None = None
    gpu_memory_utilization: float | None = None
    kv_cache_memory_bytes: int | None = None
    dtype: str | None = None
    enforce_eager: bool | None = None
    max_num_seqs: int | None = None
    max_concurrency: int | None = None

    def given(self) -> dict[str, Any]:
        """The options that were set."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}

    def engine_kwargs(self, *, on_cpu: bool, gpus: int) -> dict[str, Any]:
        """``AsyncEngineArgs`` keywords with the platform's defaults filled in: tensor
        parallelism over every GPU; on the CPU one process, a KV cache of
        :data:`CPU_KV_CACHE_BYTES` (unless a memory fraction is given) and eager mode.

        Example:
            >>> VllmOptions().engine_kwargs(on_cpu=True, gpus=0)
            {'tensor_parallel_size': 1, 'kv_cache_memory_bytes': 1073741824, 'enforce_eager': True}
            >>> VllmOptions(dtype="float32").engine_kwargs(on_cpu=False, gpus=4)
            {'dtype': 'float32', 'tensor_parallel_size': 4}
        """
        kwargs = self.given()
        kwargs.pop("max_concurrency", None)
        kwargs.setdefault("tensor_parallel_size", 1 if on_cpu else max(1, gpus))
        if on_cpu:
            if self.gpu_memory_utilization is None:
                kwargs.setdefault("kv_cache_memory_bytes", CPU_KV_CACHE_BYTES)
            kwargs.setdefault("enforce_eager", True)
        return kwargs


_BYTES = re.compile(r"(\d+)\s*(?:([KMGT])i?B?)?", re.IGNORECASE)
_BYTE_UNITS = {None: 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def _byte_count(text: str) -> int:
    match = _BYTES.fullmatch(text)
    if match is None:
        raise ValueError("not a byte count such as 1073741824, 512MiB or 4GiB")
    unit = match[2].lower() if match[2] else None
    return int(match[1]) * _BYTE_UNITS[unit]


def _boolean(text: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise ValueError("not true or false")
    return text.lower() == "true"


def _number(kind: type) -> Any:
    def convert(text: str) -> Any:
        try:
            return kind(text)
        except ValueError:
            raise ValueError(f"not {'an integer' if kind is int else 'a number'}") from None

    return convert


_CONVERTERS = {
    "tensor_parallel_size": _number(int),
    "max_model_len": _number(int),
    "gpu_memory_utilization": _number(float),
    "kv_cache_memory_bytes": _byte_count,
    "dtype": str,
    "enforce_eager": _boolean,
    "max_num_seqs": _number(int),
    "max_concurrency": _number(int),
}


def parse_model_args(text: str | None) -> VllmOptions:
    """``key=value,key=value`` (lm-evaluation-harness's ``--model_args`` form) as options.

    Every unknown key and bad value is reported at once, in one :class:`UserError`.

    Example:
        >>> parse_model_args("kv_cache_memory_bytes=512MiB,enforce_eager=false")
        VllmOptions(..., kv_cache_memory_bytes=536870912, dtype=None, enforce_eager=False, ...)
        >>> parse_model_args("tp=2,max_model_len=long")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        videorl_kit.core.errors.UserError: --model-args: unknown key 'tp' (known: ...);
        max_model_len=long: not an integer
    """
    values: dict[str, Any] = {}
    problems = []
    for item in (part.strip() for part in (text or "").split(",")):
        name, sep, raw = (x.strip() for x in item.partition("="))
        if not item:
            continue
        if not sep:
            problems.append(f"{item!r} is not key=value")
        elif name not in _CONVERTERS:
            problems.append(f"unknown key {name!r} (known: {', '.join(_CONVERTERS)})")
        else:
            try:
                values[name] = _CONVERTERS[name](raw)
            except ValueError as exc:
                problems.append(f"{name}={raw}: {exc}")
    if problems:
        raise UserError("--model-args: " + "; ".join(problems))
    return VllmOptions(**values)
