"""Recipe values that reach a generated script, checked when the recipe is validated.

A run bundle's ``launch.sh`` (and the Ray job it submits) carries the recipe's paths, model,
Ray address and extra flags. The script quotes every one of them; these rules refuse, at
``validate`` and ``train --dry-run``, what no quoting makes right:

* a path, model or id with a control character (a newline, a carriage return, an escape, a
  bidirectional override): it would end a line of the script or hide what a reader sees;
* a ``hf://`` model whose repo id or revision is not one (:func:`hf_model_problem`);
* a Ray address that is not an address: ``http(s)://HOST[:PORT][/PATH]`` (the dashboard's job
  API), ``ray://HOST:PORT`` (Ray Client), ``HOST:PORT`` (a head node) or ``auto``.

What one engine cannot read (OpenRLHF: a bundle folder holding ``,`` or ``@``) is that
backend's rule: see :mod:`videorl_kit.adapters.openrlhf.limits`.

Example:
    >>> ray_address_problem("http://head-node:8265") is None
    True
    >>> ray_address_problem("http://x:8265/$(touch FILE)")[:52]
    "'http://x:8265/$(touch FILE)' is not a Ray address: "
    >>> text_problem("runs/a\\nb")
    'has a control character (\\\\n): paths, models and ids must be one line of text'
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator

from videorl_kit.core.safe_text import control_characters, quoted
from videorl_kit.hf.errors import HubError
from videorl_kit.hf.refs import HF_SCHEME, check_revision

_HOST = r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])"
_RAY_ADDRESS = re.compile(
    rf"(?:https?://{_HOST}(?::\d{{1,5}})?(?:/[A-Za-z0-9._~/-]*)?"
    rf"|(?:ray://)?{_HOST}:\d{{1,5}}|auto)"
)


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be written into a script, or None.

    Example:
        >>> text_problem("runs/my run $(x)") is None  # quoted in the script: fine
        True
    """
    bad = control_characters(value)
    if bad:
        return (
            f"has a control character ({', '.join(dict.fromkeys(bad))}): paths, models and "
            "ids must be one line of text"
        )
    return None


def path_arg(path: object) -> str:
    """``path`` as a command-line argument that no program reads as an option: a relative path
    that starts with ``-`` gets ``./`` in front (quote the result for a shell: ``shlex.join``).

    Example:
        >>> path_arg("-x.yaml"), path_arg("/runs/-x"), path_arg("recipes/a.yaml")
        ('./-x.yaml', '/runs/-x', 'recipes/a.yaml')
    """
    text = str(path)
    return f"./{text}" if text.startswith("-") else text


def ray_address_problem(value: str) -> str | None:
    """Why ``value`` is not a Ray address the job can be submitted to, or None.

    Example:
        >>> [ray_address_problem(a) for a in ("ray://10.0.0.1:10001", "auto", "head:6379")]
        [None, None, None]
        >>> ray_address_problem("http://a:1;b") is None
        False
    """
    if _RAY_ADDRESS.fullmatch(value) and not control_characters(value):
        return None
    return (
        f"{quoted(value)} is not a Ray address: use http(s)://HOST[:PORT] (the dashboard's "
        "job API, e.g. http://head-node:8265), ray://HOST:PORT, HOST:PORT or auto"
    )


def hf_model_problem(value: str) -> str | None:
    """Why a ``hf://ORG/NAME[@REVISION]`` model is not one, or None (also for a folder or a
    ``tiny:`` model). The repo id follows huggingface_hub's rules (``validate_repo_id``), the
    revision git's ref rules in the characters Hub refs use
    (:func:`~videorl_kit.hf.refs.check_revision`): no value that a shell, a URL or a path
    would read as more than a name.

    Example:
        >>> hf_model_problem("hf://Qwen/Qwen2.5-VL-7B-Instruct@main") is None
        True
        >>> print(hf_model_problem("hf://Org/Name@main$(id)"))
        'hf://Org/Name@main$(id)': invalid revision 'main$(id)': not a branch, tag or commit ...
    """
    if not value.startswith(HF_SCHEME):
        return None
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    repo, at, revision = value[len(HF_SCHEME) :].partition("@")
    try:
        validate_repo_id(repo)
    except HFValidationError as exc:
        return (
            f"{quoted(value)}: {quoted(repo)} is not a Hub repo id: {exc} (write "
            "hf://ORG/NAME[@REVISION])"
        )
    if at:
        try:
            check_revision(revision)
        except HubError as exc:
            return f"{quoted(value)}: {exc}"
    return None


def _one_line(value: str) -> str:
    problem = text_problem(value)
    if problem:
        raise ValueError(f"{quoted(value)} {problem}")
    return value


def _ray_address(value: str) -> str:
    problem = ray_address_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def _plain_values(value: Any) -> Any:
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            _one_line(item)
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
    return value


ScriptText = Annotated[str, AfterValidator(_one_line)]
"""A recipe string that reaches a generated script (a path, a model, a name)."""

RayAddress = Annotated[str, AfterValidator(_ray_address)]
"""A recipe's ``openrlhf.ray_address``."""

ScriptArgs = Annotated[dict[str, Any], AfterValidator(_plain_values)]
"""Extra command-line flags: every key and text value one line."""
