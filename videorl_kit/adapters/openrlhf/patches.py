"""The two small changes OpenRLHF 0.11.2 needs to train on native video, applied at start-up.

Mainline OpenRLHF passes images only. The bundle's native-video agent sends videos itself;
two places in OpenRLHF still assume images:

1. **Training forward** (``openrlhf/models/actor.py``, ``Actor.forward``): for a VLM sample it
   rebuilds the token-type mask (0 text, 1 image, 2 video) over prompt and response and passes
   it as ``mm_token_type_ids`` only when ``image_grid_thw`` is among the inputs, else as
   ``token_type_ids``. Qwen2.5-VL and Qwen3-VL read ``mm_token_type_ids`` to place video
   tokens on the M-RoPE grid and ignore ``token_type_ids``, so a video-only sample gets other
   position ids (other logits) in training than in the processor's own forward.
   :func:`patch_actor_forward` makes the same choice when ``video_grid_thw`` is present: it
   recompiles ``Actor.forward`` from its source with that one condition changed, and only if
   the source line is exactly the 0.11.2 one. The patched forward also applies the kit's
   M-RoPE rule (:func:`~videorl_kit.media.mrope.use_qwen_positions`, Qwen's and vLLM's) to the
   actor's model on its first call, so training's positions are the rollout's.
2. **vLLM engine limits** (``trainer/ray/vllm_engine.py``): engines are created with
   ``limit_mm_per_prompt={"image": N}`` only. :func:`raise_vllm_video_limit` adds the bundle's
   videos-per-prompt limit to every ``vllm.AsyncEngineArgs`` built in the process, so vLLM
   reserves encoder memory for the videos it will be sent.

Both refuse (:class:`PatchError`) to touch an OpenRLHF other than :data:`SUPPORTED_OPENRLHF`.
Where they run: the rollout actors load the bundle's agent module before they build their
vLLM engine, and the agent module applies (2); every Ray worker runs :func:`setup_worker`
(``launch.sh`` names it as the runtime env's ``worker_process_setup_hook``), which applies (1)
to ``openrlhf.models.actor`` as soon as a worker imports it, without importing it itself.

Example:
    >>> import dataclasses, types
    >>> @dataclasses.dataclass
    ... class EngineArgs:  # a stand-in for vllm.AsyncEngineArgs
    ...     model: str
    ...     limit_mm_per_prompt: dict | None = None
    >>> fake_vllm = types.SimpleNamespace(AsyncEngineArgs=EngineArgs)
    >>> raise_vllm_video_limit(2, fake_vllm, check_version=False)
    >>> fake_vllm.AsyncEngineArgs(model="m", limit_mm_per_prompt={"image": 4}).limit_mm_per_prompt
    {'image': 4, 'video': 2}
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.metadata
import importlib.util
import inspect
import sys
import textwrap
import threading
from types import ModuleType
from typing import Any

from videorl_kit.media.mrope import use_qwen_positions

SUPPORTED_OPENRLHF = "0.11.2"
"""The OpenRLHF release these patches (and the bundle's argv) are written for."""

ACTOR_MODULE = "openrlhf.models.actor"
_OLD_CHOICE = 'key = "mm_token_type_ids" if "image_grid_thw" in mm_inputs else "token_type_ids"'
_NEW_CHOICE = (
    'key = "mm_token_type_ids" if ("image_grid_thw" in mm_inputs or "video_grid_thw" in '
    'mm_inputs) else "token_type_ids"'
)
_PATCHED = "_videorl_kit_patched"
_lock = threading.Lock()


class PatchError(RuntimeError):
    """OpenRLHF is not the version (or the code) a patch was written for."""


def check_openrlhf_version() -> str:
    """The installed OpenRLHF version; :class:`PatchError` unless it is the supported one."""
    try:
        version = importlib.metadata.version("openrlhf")
    except importlib.metadata.PackageNotFoundError:
        raise PatchError("openrlhf is not installed") from None
    if version != SUPPORTED_OPENRLHF:
        raise PatchError(
            f"videorl-kit's native-video patches are written for openrlhf {SUPPORTED_OPENRLHF} "
            f"and refuse to patch openrlhf {version}; install openrlhf=={SUPPORTED_OPENRLHF} or "
            "use the frames-as-images video path"
        )
    return version


def patch_actor_forward(module: ModuleType | None = None, *, check_version: bool = True) -> bool:
    """Make ``Actor.forward`` pass ``mm_token_type_ids`` for video samples too.

    Returns True when it patched, False when already patched. Raises :class:`PatchError` if
    the OpenRLHF version or the patched source line is not the expected one.
    """
    if check_version:
        check_openrlhf_version()
    if module is None:
        import openrlhf.models.actor as module
    actor = module.Actor
    with _lock:
        if getattr(actor.forward, _PATCHED, False):
            return False
        source = textwrap.dedent(inspect.getsource(actor.forward))
        if source.count(_OLD_CHOICE) != 1:
            raise PatchError(
                f"{module.__file__}: Actor.forward does not hold the line this patch changes "
                f"({_OLD_CHOICE!r}); refusing to patch"
            )
        code = compile(
            source.replace(_OLD_CHOICE, _NEW_CHOICE), module.__file__ or ACTOR_MODULE, "exec"
        )
        namespace: dict[str, Any] = {}
        exec(code, vars(module), namespace)
        recompiled = namespace["forward"]

        @functools.wraps(recompiled)
        def forward(self: Any, *args: Any, **kwargs: Any) -> Any:
            use_qwen_positions(getattr(self, "model", None))  # once per model; then a check
            return recompiled(self, *args, **kwargs)

        forward.__qualname__ = actor.forward.__qualname__
        setattr(forward, _PATCHED, True)
        actor.forward = forward
    return True


def raise_vllm_video_limit(
    max_videos: int, vllm_module: Any = None, *, check_version: bool = True
) -> None:
    """Add ``"video": max_videos`` to the ``limit_mm_per_prompt`` of every engine this process
    builds through ``vllm.AsyncEngineArgs`` (a limit already given for video is kept)."""
    if max_videos < 1:
        raise ValueError(f"max_videos must be at least 1, got {max_videos}")
    if check_version:
        check_openrlhf_version()
    if vllm_module is None:
        import vllm as vllm_module
    original = vllm_module.AsyncEngineArgs
    with _lock:
        if getattr(original, _PATCHED, False):
            return

        class VideoLimitEngineArgs(original):  # type: ignore[misc, valid-type]
            """``AsyncEngineArgs`` with a video limit next to OpenRLHF's image limit."""

            def __init__(self, *args: Any, **kwargs: Any) -> None:
                limits = dict(kwargs.get("limit_mm_per_prompt") or {})
                limits.setdefault("video", max_videos)
                kwargs["limit_mm_per_prompt"] = limits
                super().__init__(*args, **kwargs)

        setattr(VideoLimitEngineArgs, _PATCHED, True)
        VideoLimitEngineArgs.__name__ = VideoLimitEngineArgs.__qualname__ = original.__name__
        vllm_module.AsyncEngineArgs = VideoLimitEngineArgs


class _PatchAfterImport(importlib.abc.MetaPathFinder):
    """Runs :func:`patch_actor_forward` right after ``openrlhf.models.actor`` is imported."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != ACTOR_MODULE:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_patch(module: ModuleType) -> None:
            exec_module(module)
            patch_actor_forward(module)

        spec.loader = _LoaderProxy(spec.loader, exec_and_patch)
        return spec


class _LoaderProxy(importlib.abc.Loader):
    def __init__(self, loader: Any, exec_module: Any) -> None:
        self._loader, self._exec_module = loader, exec_module

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._exec_module(module)


def setup_worker() -> None:
    """Ray ``worker_process_setup_hook``: patch ``Actor.forward`` in this worker process.

    Checks the OpenRLHF version at once; patches now if the actor module is already imported,
    else right after the worker imports it.
    """
    check_openrlhf_version()
    module = sys.modules.get(ACTOR_MODULE)
    if module is not None:
        patch_actor_forward(module)
    elif not any(isinstance(finder, _PatchAfterImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _PatchAfterImport())
