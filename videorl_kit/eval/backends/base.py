"""The backend interface: ``generate(requests) -> responses`` plus a description.

Example:
    >>> class Echo(Backend):
    ...     kind = "replay"
    ...     def info(self):
    ...         return ModelInfo(backend="replay", fingerprint="0" * 64)
    ...     def generate(self, requests):
    ...         return [request.prompt for request in requests]
    >>> Echo().needs_media, Echo().patch_factor
    (False, None)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from videorl_kit.core.errors import UserError
from videorl_kit.eval.environment import WEIGHT_SUFFIXES, model_fingerprint
from videorl_kit.eval.requests import GenerationRequest
from videorl_kit.eval.results import ModelInfo


class Backend:
    """Base class of the backends (subclasses set ``kind`` and implement two methods)."""

    kind: str = ""
    #: Whether requests need cached media (False: prompts and gold only, no cache build).
    needs_media: bool = False

    @property
    def patch_factor(self) -> int | None:
        """The resize factor (patch x merge) the model's processor expects, if known."""
        return None

    def info(self) -> ModelInfo:
        """What produced the responses, for ``results.json``."""
        raise NotImplementedError

    def generate(self, requests: Sequence[GenerationRequest]) -> list[str]:
        """One response per request, in order (a batch of one task, same sampling params)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the model (default: nothing to release)."""


def check_vlm_folder(path: Path, option: str = "--model") -> Any:
    """The ``transformers`` config of a local vision-language model folder, or a UserError.

    Example:
        >>> check_vlm_folder(Path("/nonexistent"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        videorl_kit.core.errors.UserError: --model /nonexistent: no such folder ...
    """
    if not path.is_dir():
        raise UserError(
            f"{option} {path}: {'not a folder' if path.exists() else 'no such folder'} (the "
            "transformers and vllm backends load a local model folder holding config.json and "
            "the weights)"
        )
    if not (path / "config.json").is_file():
        raise UserError(f"{option} {path}: no config.json, not a model folder")
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(path)
    except (OSError, ValueError, KeyError) as exc:
        raise UserError(f"{option} {path}: config.json cannot be read: {exc}") from None
    if getattr(config, "vision_config", None) is None:
        raise UserError(
            f"{option} {path}: not a vision-language model (model_type "
            f"{getattr(config, 'model_type', None)!r} has no vision_config); evaluation needs "
            "an image-text-to-text model such as Qwen2.5-VL or Qwen3-VL"
        )
    if not any(p.suffix in WEIGHT_SUFFIXES for p in path.iterdir() if p.is_file()):
        raise UserError(
            f"{option} {path}: no weights ({', '.join('*' + s for s in WEIGHT_SUFFIXES)}) "
            "next to config.json"
        )
    return config


def config_patch_factor(config: Any) -> int | None:
    """Resize factor (patch x spatial merge) a model config's vision tower expects, if it says.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> config_patch_factor(NS(vision_config=NS(patch_size=16, spatial_merge_size=2)))
        32
    """
    vision = getattr(config, "vision_config", None)
    patch = getattr(vision, "patch_size", None)
    merge = getattr(vision, "spatial_merge_size", None)
    return int(patch) * int(merge) if patch and merge else None


class LocalModelBackend(Backend):
    """A backend over a local model folder: checked, fingerprinted, described."""

    needs_media = True

    def __init__(self, model_path: str | Path):
        self.path = Path(model_path)
        self.config = check_vlm_folder(self.path)
        self.fingerprint, self.fingerprint_files = model_fingerprint(self.path)

    @property
    def patch_factor(self) -> int | None:
        """Resize factor (patch x merge) of the model's vision tower, if its config says."""
        return config_patch_factor(self.config)

    def details(self) -> dict[str, Any]:
        """Backend-specific facts for ``ModelInfo.details``."""
        return {}

    def info(self) -> ModelInfo:
        """Model folder, type, fingerprint and the backend's details."""
        return ModelInfo(
            backend=self.kind,  # type: ignore[arg-type]
            path=str(self.path.resolve()),
            name=getattr(self.config, "model_type", None),
            fingerprint=self.fingerprint,
            fingerprint_files=self.fingerprint_files,
            details={
                "architectures": getattr(self.config, "architectures", None),
                **self.details(),
            },
        )
