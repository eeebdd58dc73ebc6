"""Starting a bundle on a Ray cluster: the runtime env, ``launch.sh`` and job submission.

The job runs ``python -m openrlhf.cli.train_ppo_ray <argv.json>`` as a Ray job. Its runtime
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

Example:
    >>> entrypoint(["--data.max_len", "2048", "--train.seed", "0"])
    'python -m openrlhf.cli.train_ppo_ray --data.max_len 2048 --train.seed 0'
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
from videorl_kit.adapters.openrlhf.parser_check import ENTRY_MODULE
from videorl_kit.core.errors import UserError

DEFAULT_RAY_ADDRESS = "http://127.0.0.1:8265"
"""The Ray dashboard (job API) of a head node started on the submitting machine."""

SETUP_HOOK = "videorl_kit.adapters.openrlhf.patches.setup_worker"

KIT_SNAPSHOT = Path("kit") / "videorl_kit"
"""Where the bundle keeps its copy of the kit (shipped with ``py_modules``)."""


def entrypoint(argv: Sequence[str]) -> str:
    """The job's shell command line."""
    return f"python -m {ENTRY_MODULE} {shlex.join(argv)}"


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


def launch_script(bundle: Path, argv: Sequence[str], address: str) -> str:
    """``launch.sh``: submit the job and follow its logs (``RAY_ADDRESS`` overrides ``address``)."""
    return f"""#!/usr/bin/env bash
# Train with OpenRLHF on a Ray cluster: the run bundle in {bundle}
# (written by videorl-kit {__version__}; argv in argv.json, runtime env in runtime_env.json).
#
#   bash {shlex.quote(str(bundle / "launch.sh"))}
#   RAY_ADDRESS=http://HEAD_NODE:8265 bash launch.sh
#
# Needs: `ray` on the submitting machine; on every node openrlhf 0.11.2 (with vLLM and
# DeepSpeed), the kit's requirements (pip install -r kit/requirements.txt, once per image)
# and this folder at the same path. Logs follow until the job ends.
set -euo pipefail
BUNDLE={shlex.quote(str(bundle))}
export RAY_ADDRESS="${{RAY_ADDRESS:-{address}}}"
exec ray job submit --address "$RAY_ADDRESS" \\
    --runtime-env-json "$(cat "$BUNDLE/runtime_env.json")" \\
    -- {entrypoint(argv)}
"""


def write_launch_files(
    bundle: Path, argv: Sequence[str], address: str, *, native_video: bool
) -> Path:
    """Write ``argv.json``, ``runtime_env.json`` and ``launch.sh``; return the script's path."""
    (bundle / "argv.json").write_text(json.dumps(list(argv), indent=1) + "\n", encoding="utf-8")
    env = runtime_env(bundle, native_video=native_video)
    (bundle / "runtime_env.json").write_text(json.dumps(env, indent=1) + "\n", encoding="utf-8")
    script = bundle / "launch.sh"
    script.write_text(launch_script(bundle, argv, address), encoding="utf-8")
    script.chmod(0o755)
    return script


def submit(bundle: Path, address: str) -> str:
    """Submit the bundle's job to the Ray cluster at ``address`` and follow its logs.

    Returns the job id. Raises :class:`~videorl_kit.core.errors.UserError` in one line when no
    cluster answers at ``address``, or when the job does not succeed.
    """
    from ray.job_submission import JobStatus, JobSubmissionClient

    argv = json.loads((bundle / "argv.json").read_text(encoding="utf-8"))
    env = json.loads((bundle / "runtime_env.json").read_text(encoding="utf-8"))
    try:
        client = JobSubmissionClient(address)
    except Exception as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(
            f"no Ray cluster reachable at {address} ({reason}); start one (`ray start --head`) "
            "or set RAY_ADDRESS / openrlhf.ray_address, or write the bundle with --dry-run"
        ) from None
    job_id = client.submit_job(entrypoint=entrypoint(argv), runtime_env=env)

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
