"""The spec repo manifest: ``videorl_kit_manifest.json``, the sha256 of every published file.

``pull`` checks each downloaded file against it, so a file changed on the server (or in
a local copy) after publishing is reported by name instead of silently used. The
manifest lists itself nowhere; files outside it (``.gitattributes`` added by the Hub) are
ignored and never loaded.

Example:
    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "README.md").write_text("hi\\n")
    >>> files = hash_tree(root)
    >>> files["README.md"].size
    3
    >>> manifest = Manifest(kit_version="0.1.0", repo_id="org/name", specs=[], files=files)
    >>> verify_tree(root, manifest)
    >>> _ = (root / "README.md").write_text("changed\\n")
    >>> try:
    ...     verify_tree(root, manifest)
    ... except HubIntegrityError as exc:
    ...     print(str(exc).split(" (sha256")[0])
    1 file(s) do not match the manifest: README.md: size 8 != 3
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from videorl_kit.hf.errors import HubIntegrityError
from videorl_kit.hf.refs import normalize_repo_path

MANIFEST_NAME = "videorl_kit_manifest.json"
MANIFEST_FORMAT = "videorl-kit-spec-repo"
MANIFEST_FORMAT_VERSION = 1
#: Local bookkeeping folders that are never part of a repo (huggingface_hub's local_dir cache).
IGNORED_DIRS = frozenset({".cache", ".git"})


class FileEntry(BaseModel):
    """Size and sha256 of one file in the repo."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sha256: str = Field(..., pattern=r"^[0-9a-f]{64}$")
    size: int = Field(..., ge=0)


class SpecEntry(BaseModel):
    """One published spec: where its resolved YAML and sample manifest live."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(..., pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    version: int = Field(..., ge=1)
    problem_type: str
    tags: list[str] = Field(default_factory=list)
    verifier: dict[str, Any]
    spec_path: str
    sample_path: str
    sample_rows: int = Field(..., ge=0)
    data_source: dict[str, Any] = Field(default_factory=dict)
    provenance: list[dict[str, str]] = Field(default_factory=list)

    @field_validator("spec_path", "sample_path")
    @classmethod
    def _inside_repo(cls, value: str) -> str:
        if normalize_repo_path(value) != value:
            raise ValueError(f"path {value!r} is not normalised")
        return value


class Manifest(BaseModel):
    """The whole manifest file (format ``videorl-kit-spec-repo``, version 1)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: Literal["videorl-kit-spec-repo"] = MANIFEST_FORMAT
    format_version: Literal[1] = MANIFEST_FORMAT_VERSION
    kit_version: str
    repo_id: str
    specs: list[SpecEntry]
    files: dict[str, FileEntry]

    @field_validator("files")
    @classmethod
    def _paths_inside_repo(cls, value: dict[str, FileEntry]) -> dict[str, FileEntry]:
        for path in value:
            if normalize_repo_path(path) != path or path == MANIFEST_NAME:
                raise ValueError(f"file path {path!r} is not a normalised repo path")
        return value

    def to_json(self) -> str:
        """Serialise deterministically (sorted file list, trailing newline)."""
        data = self.model_dump(mode="json")
        data["files"] = dict(sorted(data["files"].items()))
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks.

    Example:
        >>> import pathlib, tempfile
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "x"
        >>> _ = p.write_bytes(b"abc")
        >>> sha256_file(p)[:16]
        'ba7816bf8f01cfea'
    """
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def hash_tree(root: Path) -> dict[str, FileEntry]:
    """Hash every file under ``root`` except the manifest and local cache folders.

    Example:
        >>> import pathlib, tempfile
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (root / "a.txt").write_text("x")
        >>> sorted(hash_tree(root))
        ['a.txt']
    """
    files: dict[str, FileEntry] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] in IGNORED_DIRS or not path.is_file() or rel.as_posix() == MANIFEST_NAME:
            continue
        files[rel.as_posix()] = FileEntry(sha256=sha256_file(path), size=path.stat().st_size)
    return files


def read_manifest(path: Path, shown: str = MANIFEST_NAME) -> Manifest:
    """Read and validate a manifest file; a clear :class:`HubError` if it is unusable.

    Example:
        >>> import pathlib, tempfile
        >>> p = pathlib.Path(tempfile.mkdtemp()) / MANIFEST_NAME
        >>> _ = p.write_text("{}")
        >>> try:
        ...     read_manifest(p)
        ... except HubIntegrityError as exc:
        ...     print(str(exc).splitlines()[0])
        videorl_kit_manifest.json: not a valid videorl-kit manifest:
    """
    if not path.is_file():
        raise HubIntegrityError(
            f"{shown}: missing; this repo was not published by `videorl-kit publish` "
            "or the manifest was deleted"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HubIntegrityError(f"{shown}: not valid JSON ({exc})") from None
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        details = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in exc.errors()
        )
        raise HubIntegrityError(f"{shown}: not a valid videorl-kit manifest:\n{details}") from None


def verify_tree(root: Path, manifest: Manifest) -> None:
    """Check every manifest file under ``root``; raise naming each missing or changed file.

    Example:
        >>> import pathlib, tempfile
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> m = Manifest(kit_version="0", repo_id="o/n", specs=[],
        ...              files={"gone.txt": FileEntry(sha256="0" * 64, size=1)})
        >>> try:
        ...     verify_tree(root, m)
        ... except HubIntegrityError as exc:
        ...     print(exc)
        1 file(s) do not match the manifest: gone.txt: missing
    """
    problems: list[str] = []
    for rel, entry in sorted(manifest.files.items()):
        path = root.joinpath(*rel.split("/"))
        if not path.is_file():
            problems.append(f"{rel}: missing")
            continue
        size = path.stat().st_size
        actual = sha256_file(path)
        if size != entry.size:
            problems.append(f"{rel}: size {size} != {entry.size} (sha256 {actual[:12]}…)")
        elif actual != entry.sha256:
            problems.append(
                f"{rel}: sha256 {actual[:12]}… != {entry.sha256[:12]}… from the manifest"
            )
    if problems:
        raise HubIntegrityError(
            f"{len(problems)} file(s) do not match the manifest: " + "; ".join(problems)
        )
