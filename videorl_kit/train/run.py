"""Running a checked plan on a backend: the run folder, the backend interface, the order of work.

A backend (``videorl_kit.adapters.trl``, ``videorl_kit.adapters.openrlhf``) implements
:class:`TrainBackend`. Recipe validation (``validate``, ``train``, ``train --plan``) asks the
recipe's backend for its ``problems(loaded)`` first (:func:`~videorl_kit.train.recipe.load_recipe`
with the backends the CLI injects); then :func:`run_training` calls it in a fixed order:

1. ``check(plan)``: backend-specific bad input (a package missing, an option it does not
   know), raised as :class:`~videorl_kit.core.errors.UserError` before anything is written;
2. :func:`write_run_files`: the run folder's record (resolved recipe, every spec with its
   provenance, the kit and library versions) and, for ``tiny:`` models, the tiny model;
3. ``prepare(plan)``: the backend writes what it launches from (TRL: its config; OpenRLHF:
   the run bundle) and returns what ``--dry-run`` shows;
4. unless ``dry_run``, ``train(plan)``: train, appending to ``metrics.jsonl``
   (:class:`~videorl_kit.train.metrics.MetricsLog`) and saving checkpoints in the run folder;
   with ``plan.resume`` it continues from the folder's last checkpoint.

Example:
    >>> import tempfile
    >>> from videorl_kit.adapters.trl import TrlBackend
    >>> from videorl_kit.train.demo import write_demo_recipe
    >>> from videorl_kit.train.plan import plan_training
    >>> plan = plan_training(write_demo_recipe(tempfile.mkdtemp()))
    >>> report = run_training(plan, TrlBackend(), dry_run=True)
    >>> names = sorted(p.name for p in report.output_dir.iterdir())
    >>> report.trained, names[:3]
    (False, ['base-model', 'dry_run.json', 'recipe.resolved.yaml'])
    >>> names[3:]
    ['specs.json', 'trl_config.json', 'versions.json']
    >>> plan_training(plan.loaded.path).output_dir == plan.output_dir  # no conflict for a real run
    True
"""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

import yaml

from videorl_kit import __version__
from videorl_kit.core.out_folder import refuse_links
from videorl_kit.train.cluster_plan import BackendPlan, PlanDraft
from videorl_kit.train.metrics import METRICS_FILE, TaskSummary, read_metrics, task_summaries
from videorl_kit.train.plan import (
    BASE_MODEL_DIR,
    DRY_RUN_FILE,
    RESOLVED_RECIPE,
    TrainPlan,
    dry_run_only,
)
from videorl_kit.train.recipe import LoadedRecipe
from videorl_kit.train.tiny_model import build_tiny_model

SPECS_FILE = "specs.json"
VERSIONS_FILE = "versions.json"
PACKAGES = ("torch", "transformers", "trl", "accelerate", "datasets", "pylance", "pyarrow",
            "numpy", "av", "openrlhf", "vllm", "deepspeed", "ray")  # fmt: skip
"""Libraries whose installed versions a run records (those not installed are left out)."""


class TrainBackend(Protocol):
    """What a training backend implements (see the module docstring for the call order)."""

    name: str

    def problems(self, loaded: LoadedRecipe) -> list[tuple[str, str]]:
        """``(dotted field path, message)`` for each thing of the recipe this backend cannot
        run (its rules about the recipe's fields: no store, model or network needed); recipe
        validation reports them at their file and line with the recipe's other problems."""
        ...

    def check(self, plan: TrainPlan) -> None:
        """Raise ``UserError`` for input this backend cannot run; write nothing."""
        ...

    def plan(self, draft: PlanDraft) -> BackendPlan:
        """``train --plan``: how the backend would launch ``draft`` (argv or config), on how
        many GPUs or processes, with which memory inputs; needs no store or model files and
        writes nothing (see :mod:`videorl_kit.train.cluster_plan`)."""
        ...

    def prepare(self, plan: TrainPlan) -> dict[str, Any]:
        """Write the backend's launch inputs into ``plan.output_dir``; return a summary."""
        ...

    def train(self, plan: TrainPlan) -> None:
        """Train (or resume), appending to ``plan.output_dir / "metrics.jsonl"``."""
        ...


@dataclass
class RunReport:
    """What a run did: the backend's summary, whether it trained, rewards per task."""

    output_dir: Path
    prepared: dict[str, Any]
    trained: bool
    tasks: list[TaskSummary] = field(default_factory=list)


def package_versions() -> dict[str, str]:
    """Installed versions of the libraries a run depends on.

    Example:
        >>> "pyarrow" in package_versions()
        True
    """
    found = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def _git_commit() -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            cwd=Path(__file__).parent,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def _spec_record(plan: TrainPlan, entry: Any) -> dict[str, Any]:
    resolved = entry.spec.resolved_dict()
    text = json.dumps(resolved, sort_keys=True, separators=(",", ":"))
    return {
        "id": entry.spec.id,
        "version": entry.spec.version,
        "weight": entry.weight,
        "file": str(entry.spec.source_file) if entry.spec.source_file else None,
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "provenance": entry.spec.provenance,
        "ready_samples": plan.samples[entry.spec.id],
        "spec": resolved,
    }


def write_run_files(plan: TrainPlan) -> None:
    """Write the run's record into ``plan.output_dir`` (and a ``tiny:`` model, once).

    ``recipe.resolved.yaml`` (every default filled, the algorithm's backend options),
    ``specs.json`` (each spec resolved, its file, hash, Hub provenance, weight and ready
    samples), ``versions.json`` (kit, Python, platform, library versions, git commit).
    """

    out = plan.output_dir
    refuse_links(out, f"the run folder {out}")
    out.mkdir(parents=True, exist_ok=True)
    if not plan.resume and dry_run_only(out):  # a dry run's folder: its record is replaced
        planned = json.loads((out / DRY_RUN_FILE).read_text(encoding="utf-8")).get("model")
        if planned != plan.model.describe():
            shutil.rmtree(out / BASE_MODEL_DIR, ignore_errors=True)
        (out / DRY_RUN_FILE).unlink()
    resolved = json.loads(json.dumps(plan.loaded.resolved_dict()))
    (out / RESOLVED_RECIPE).write_text(yaml.safe_dump(resolved, sort_keys=False), "utf-8")
    specs = {
        "store": str(plan.store.resolve()),
        "tasks": [_spec_record(plan, entry) for entry in plan.loaded.tasks],
    }
    (out / SPECS_FILE).write_text(json.dumps(specs, indent=2) + "\n", "utf-8")
    versions = {
        "videorl_kit": __version__,
        "git_commit": _git_commit(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": package_versions(),
    }
    (out / VERSIONS_FILE).write_text(json.dumps(versions, indent=2) + "\n", "utf-8")
    if plan.model.kind == "tiny" and not (out / BASE_MODEL_DIR / "config.json").exists():
        build_tiny_model(out / BASE_MODEL_DIR, plan.model.name, seed=plan.recipe.seed)


def run_training(plan: TrainPlan, backend: TrainBackend, *, dry_run: bool = False) -> RunReport:
    """Check, record, prepare and (unless ``dry_run``) train ``plan`` on ``backend``."""
    if backend.name != plan.backend:
        raise ValueError(f"plan is for backend {plan.backend!r}, not {backend.name!r}")
    backend.check(plan)
    write_run_files(plan)
    prepared = backend.prepare(plan)
    if dry_run:
        record = {"model": plan.model.describe()}
        (plan.output_dir / DRY_RUN_FILE).write_text(json.dumps(record) + "\n", "utf-8")
        return RunReport(plan.output_dir, prepared, trained=False)
    backend.train(plan)
    metrics = plan.output_dir / METRICS_FILE
    tasks = task_summaries(read_metrics(metrics)) if metrics.exists() else []
    return RunReport(plan.output_dir, prepared, trained=True, tasks=tasks)
