"""Thin helpers around huggingface_hub: endpoint/token/cache selection, revision
resolution and translation of its exceptions into one-line :class:`HubError` messages.

``HF_ENDPOINT``, ``HF_TOKEN`` and ``HF_HUB_CACHE``/``HF_HOME`` are read when a call is made
(not when the module is imported), so a shell or a test can set them at any time.

Example:
    >>> with hub_errors("pulling org/name"):
    ...     raise ConnectionRefusedError("connection refused")
    Traceback (most recent call last):
    ...
    videorl_kit.hf.errors.HubError: pulling org/name: connection refused
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from videorl_kit import __version__
from videorl_kit.hf.errors import HubError
from videorl_kit.hf.refs import COMMIT_SHA_RE

if TYPE_CHECKING:
    from huggingface_hub import HfApi

REPO_TYPE = "dataset"


def hub_endpoint(endpoint: str | None = None) -> str | None:
    """The Hub URL to use: the argument, else ``HF_ENDPOINT``, else huggingface_hub's default.

    Example:
        >>> hub_endpoint("http://127.0.0.1:8080/")
        'http://127.0.0.1:8080'
    """
    chosen = endpoint or os.environ.get("HF_ENDPOINT") or None
    return chosen.rstrip("/") if chosen else None


def hub_cache_dir() -> str | None:
    """The download cache folder from ``HF_HUB_CACHE`` or ``HF_HOME``, else the library default.

    Example:
        >>> isinstance(hub_cache_dir(), str | None)
        True
    """
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    if os.environ.get("HF_HOME"):
        return str(Path(os.environ["HF_HOME"]) / "hub")
    return None


def make_api(endpoint: str | None = None, token: str | None = None) -> HfApi:
    """An :class:`huggingface_hub.HfApi` for ``endpoint`` (default: ``HF_ENDPOINT``).

    ``token=None`` lets huggingface_hub use ``HF_TOKEN`` or the saved login.

    Example:
        >>> make_api("http://127.0.0.1:9").endpoint
        'http://127.0.0.1:9'
    """
    from huggingface_hub import HfApi

    return HfApi(
        endpoint=hub_endpoint(endpoint),
        token=token,
        library_name="videorl-kit",
        library_version=__version__,
    )


def resolve_commit(api: HfApi, repo: str, revision: str | None) -> str:
    """The full commit sha that ``revision`` (branch, tag, sha; None = default) points to.

    A full 40-hex sha is returned as is (it is immutable); anything else asks the Hub.

    Example:
        >>> resolve_commit(None, "org/name", "a" * 40) == "a" * 40
        True
    """
    if revision is not None and COMMIT_SHA_RE.fullmatch(revision):
        return revision
    with hub_errors(f"resolving {repo}@{revision or 'main'}"):
        info = api.repo_info(repo_id=repo, repo_type=REPO_TYPE, revision=revision)
    sha = getattr(info, "sha", None)
    if not sha or not COMMIT_SHA_RE.fullmatch(sha):
        raise HubError(
            f"{repo}@{revision or 'main'}: the Hub did not return a commit sha (got {sha!r}); "
            "is the repo empty?"
        )
    return sha


def _transport_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = []
    for module_name in ("httpx2", "httpx", "requests"):
        try:
            module = __import__(module_name)
        except ImportError:
            continue
        for attr in ("TransportError", "RequestException"):
            cls = getattr(module, attr, None)
            if isinstance(cls, type) and issubclass(cls, BaseException):
                errors.append(cls)
    return tuple(errors)


def _entry_path(exc: BaseException) -> str | None:
    """The repo path in a failed ``.../resolve/<rev>/<path>`` request, if any."""
    from urllib.parse import unquote

    url = str(getattr(getattr(exc, "response", None), "url", "") or "")
    _, sep, tail = url.partition("/resolve/")
    if not sep or "/" not in tail:
        return None
    return unquote(tail.split("?", 1)[0].split("/", 1)[1])


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " ".join(lines[:3]) if lines else exc.__class__.__name__


@contextmanager
def hub_errors(context: str, *, path: str | None = None) -> Iterator[None]:
    """Turn huggingface_hub and network errors raised inside into a one-line :class:`HubError`.

    ``path`` names the repo file being fetched, for "file not found" messages.

    Example:
        >>> with hub_errors("publishing"):
        ...     pass
    """
    from huggingface_hub import errors as hf_errors

    try:
        yield
    except HubError:
        raise
    except hf_errors.GatedRepoError as exc:
        raise HubError(f"{context}: the repo is gated; accept its terms and use a token") from exc
    except hf_errors.RepositoryNotFoundError as exc:
        raise HubError(
            f"{context}: repository not found (if it is private, set HF_TOKEN or pass --token)"
        ) from exc
    except hf_errors.RevisionNotFoundError as exc:
        raise HubError(f"{context}: revision not found") from exc
    except hf_errors.RemoteEntryNotFoundError as exc:
        missing = path or _entry_path(exc)
        what = f"{missing}: " if missing else ""
        raise HubError(f"{context}: {what}file not found in the repo at this revision") from exc
    except hf_errors.LocalEntryNotFoundError as exc:
        raise HubError(
            f"{context}: cannot reach the Hub and the files are not in the local cache "
            f"({_first_line(exc)})"
        ) from exc
    except hf_errors.HfHubHTTPError as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        raise HubError(f"{context}: Hub error {status}: {_first_line(exc)}") from exc
    except _transport_errors() as exc:
        raise HubError(f"{context}: cannot reach the Hub: {_first_line(exc)}") from exc
    except OSError as exc:  # disk errors, size mismatches reported by huggingface_hub
        raise HubError(f"{context}: {_first_line(exc)}") from exc
