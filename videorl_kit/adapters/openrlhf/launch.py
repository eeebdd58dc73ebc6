"""Starting a bundle on a Ray cluster: the runtime env, ``launch.sh`` and job submission.

The job runs ``python -m openrlhf.cli.train_ppo_ray`` with the argv of ``argv.json`` as a Ray
job, through :mod:`.job_entry` (no value of the run travels on the job's command line, which
Ray reads with Windows quoting and then ``/bin/sh``). Its runtime
env pins the kit: ``py_modules`` ships the copy of the ``videorl_kit`` package written into
the bundle (``kit/videorl_kit``, the code that wrote and tested the bundle) to every node.
For native video, ``worker_process_setup_hook`` applies the training-side patch in every
Ray worker (:func:`~.patches.setup_worker`). The runtime env sets no environment variable:
OpenRLHF's ``ray.init`` sets its own, and Ray refuses to merge a job's and a driver's value of
one variable.

It has no ``pip`` field on purpose: Ray builds a pip runtime env by cloning the running Python
environment when that is a virtualenv (gigabytes per job and node, before training starts)
and needs an index. The kit's own requirements, written to ``kit/requirements.txt``, belong
in the nodes' OpenRLHF environment, installed once (``pip install -r kit/requirements.txt``).

The bundle folder itself is not uploaded: prompts, frames, the reward module and the model
are read by absolute path, so every node must see the bundle at the same path (shared
storage, as the model and checkpoint folders need anyway).

``launch.sh`` quotes every value it holds, comments included (:func:`shell_word`,
:func:`comment_word`), and the recipe's values are checked when it is validated
(:mod:`videorl_kit.train.script_values`; the bundle folder: :func:`.limits.bundle_path_problem`).

Example:
    >>> entrypoint(Path("/runs/x"))
    'python -m videorl_kit.adapters.openrlhf.job_entry /runs/x/argv.json'
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import videorl_kit
from videorl_kit import __version__
from videorl_kit.adapters.openrlhf import job_entry
from videorl_kit.core.errors import UserError
from videorl_kit.core.safe_text import escape_controls

DEFAULT_RAY_ADDRESS = "http://127.0.0.1:8265"
"""The Ray dashboard (job API) of a head node started on the submitting machine."""

SETUP_HOOK = "videorl_kit.adapters.openrlhf.patches.setup_worker"

KIT_SNAPSHOT = Path("kit") / "videorl_kit"
"""Where the bundle keeps its copy of the kit (shipped with ``py_modules``)."""


ARGV_FILE = "argv.json"


def entrypoint(bundle: Path) -> str:
    """The job's shell command line (:mod:`.job_entry` on the bundle's ``argv.json``)."""
    return job_entry.entrypoint(bundle / ARGV_FILE)


def shell_word(value: object) -> str:
    """``str(value)`` as one POSIX shell word that expands to nothing but itself.

    Example:
        >>> shell_word("/runs/a $(touch x)"), shell_word("/runs/tiny")
        ("'/runs/a $(touch x)'", '/runs/tiny')
    """
    return shlex.quote(str(value))


def comment_word(value: object) -> str:
    """``str(value)`` in a comment line of a script: :func:`shell_word` with control
    characters written as escapes, so that no value can end the comment.

    Example:
        >>> comment_word("/runs/a\\ntouch x")
        "'/runs/a\\\\ntouch x'"
    """
    return shell_word(escape_controls(str(value)))


def kit_requirements() -> list[str]:
    """The kit's own (non-extra) requirements, as installed; empty when not installed.

    Example:
        >>> all(";" not in r for r in kit_requirements())
        True
    """
    try:
        requires = importlib.metadata.requires("videorl-kit") or []
    except importlib.metadata.PackageNotFoundError:
        return []
    return [r for r in requires if ";" not in r]


def snapshot_kit(bundle: Path) -> Path:
    """Copy the running ``videorl_kit`` package (adapters included) into the bundle."""

    target = bundle / KIT_SNAPSHOT
    if target.exists():
        shutil.rmtree(target)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(Path(videorl_kit.__file__).parent, target, ignore=ignore)
    lines = "".join(f"{requirement}\n" for requirement in kit_requirements())
    (target.parent / "requirements.txt").write_text(lines, encoding="utf-8")
    return target


def runtime_env(bundle: Path, *, native_video: bool) -> dict[str, Any]:
    """The Ray runtime env of the job (see the module doc).

    Example:
        >>> runtime_env(Path("/runs/x"), native_video=False)
        {'py_modules': ['/runs/x/kit/videorl_kit']}
    """
    env: dict[str, Any] = {"py_modules": [str(bundle / KIT_SNAPSHOT)]}
    if native_video:
        env["worker_process_setup_hook"] = SETUP_HOOK
    return env


def launch_script(bundle: Path, address: str) -> str:
    """``launch.sh``: submit the job and follow its logs (``RAY_ADDRESS`` overrides ``address``).

    Every value is one quoted shell word (:func:`shell_word`), in comments too
    (:func:`comment_word`); the job's command line holds no value of the run (:mod:`.job_entry`).
    """
    return f"""#!/usr/bin/env bash
# Train with OpenRLHF on a Ray cluster: the run bundle in {comment_word(bundle)}
# (written by videorl-kit {comment_word(__version__)}; argv in argv.json, runtime env in
# runtime_env.json).
#
#   bash {comment_word(bundle / "launch.sh")}
#   RAY_ADDRESS=http://HEAD_NODE:8265 bash launch.sh
#
# Needs: `ray` on the submitting machine; on every node openrlhf 0.11.2 (with vLLM and
# DeepSpeed), the kit's requirements (pip install -r kit/requirements.txt, once per image)
# and this folder at the same path. Logs follow until the job ends. The job runs
# `python -m openrlhf.cli.train_ppo_ray` with the argv of argv.json (through
# videorl_kit.adapters.openrlhf.job_entry: no value travels on the job's command line).
set -euo pipefail
BUNDLE={shell_word(bundle)}
DEFAULT_RAY_ADDRESS={shell_word(address)}
export RAY_ADDRESS="${{RAY_ADDRESS:-$DEFAULT_RAY_ADDRESS}}"
exec ray job submit --address "$RAY_ADDRESS" \\
    --runtime-env-json "$(cat "$BUNDLE/runtime_env.json")" \\
    -- {entrypoint(bundle)}
"""


def write_launch_files(
    bundle: Path, argv: Sequence[str], address: str, *, native_video: bool
) -> Path:
    """Write ``argv.json``, ``runtime_env.json`` and ``launch.sh``; return the script's path."""
    text = json.dumps(list(argv), indent=1) + "\n"
    (bundle / ARGV_FILE).write_text(text, encoding="utf-8")
    env = runtime_env(bundle, native_video=native_video)
    (bundle / "runtime_env.json").write_text(json.dumps(env, indent=1) + "\n", encoding="utf-8")
    script = bundle / "launch.sh"
    script.write_text(launch_script(bundle, address), encoding="utf-8")
    script.chmod(0o755)
    return script


def submit(bundle: Path, address: str) -> str:
    """Submit the bundle's job to the Ray cluster at ``address`` and follow its logs.

    Returns the job id. Raises :class:`~videorl_kit.core.errors.UserError` in one line when no
    cluster answers at ``address``, or when the job does not succeed.
    """
    from ray.job_submission import JobStatus, JobSubmissionClient

    env = json.loads((bundle / "runtime_env.json").read_text(encoding="utf-8"))
    try:
        client = JobSubmissionClient(address)
    except Exception as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(
            f"no Ray cluster reachable at {address} ({reason}); start one (`ray start --head`) "
            "or set RAY_ADDRESS / openrlhf.ray_address, or write the bundle with --dry-run"
        ) from None
    job_id = client.submit_job(entrypoint=entrypoint(bundle), runtime_env=env)

    async def tail() -> None:
        async for lines in client.tail_job_logs(job_id):
            print(lines, end="", flush=True)

    asyncio.run(tail())
    status = client.get_job_status(job_id)
    if status != JobStatus.SUCCEEDED:
        message = (client.get_job_info(job_id).message or "").strip().splitlines()
        why = message[0].split(", last available logs")[0] if message else "no message"
        raise UserError(f"Ray job {job_id} ended {status.value} ({why}); its log is above")
    return job_id
