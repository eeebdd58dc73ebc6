"""Training commands: ``tiny-model``, ``train``, ``plot`` and ``inspect``."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from videorl_kit.core.errors import UserError
from videorl_kit.core.terminal import TerminalConsole, echo
from videorl_kit.train.completions import COMPLETIONS_FILE, latest_completions
from videorl_kit.train.metrics import TaskSummary
from videorl_kit.train.plot import plot_run
from videorl_kit.train.script_values import path_arg
from videorl_kit.train.tiny_model import FAMILIES, HEAD_DIMS, build_tiny_model, check_family

if TYPE_CHECKING:  # the run and the plan load Lance: imported when `train` runs
    from videorl_kit.train.plan import TrainPlan
    from videorl_kit.train.run import RunReport, TrainBackend

BackendFactory = Callable[[], "TrainBackend"]


def tiny_model(
    out: Annotated[Path, typer.Argument(help="Folder for the model, tokenizer and processor.")],
    family: Annotated[
        str, typer.Option("--family", help=f"Model family: {' | '.join(FAMILIES)}.")
    ] = "qwen2.5-vl",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random weights.")] = 0,
    head_dim: Annotated[
        int,
        typer.Option(
            "--head-dim",
            help=f"Head size of the text attention: {' | '.join(map(str, HEAD_DIMS))} "
            "(vLLM's CPU attention needs 32 or more).",
        ),
    ] = 16,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")] = False,
) -> None:
    """Write a tiny random Qwen-VL model that loads offline (tests, CPU demos).

    The folder loads with `AutoProcessor` and `AutoModelForImageTextToText` with
    `HF_HUB_OFFLINE=1`; the same family and seed always give the same bytes.

    Examples:

      videorl-kit tiny-model models/tiny-qwen25 --family qwen2.5-vl

      videorl-kit tiny-model models/tiny-qwen3 --family qwen3-vl --seed 1 --json

      videorl-kit tiny-model models/tiny-vllm --head-dim 32   # for the vllm backend on CPU
    """
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # one line of output, not a shard-writing bar
    info = build_tiny_model(out, family=check_family(family), seed=seed, head_dim=head_dim)
    if as_json:
        typer.echo(json.dumps(info.as_dict(), indent=2))
        return
    echo(
        f"wrote a tiny {info.family} model ({info.n_parameters:,} parameters, vocabulary "
        f"{info.vocab_size}, resize factor {info.patch_factor}, head size {info.head_dim}) "
        f"to {info.path}"
    )


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def task_table(tasks: list[TaskSummary]) -> Table:
    """The end-of-run table: per task, logged steps, first / last / mean reward, format rate."""
    table = Table(title="Rewards per task")
    table.add_column("task", no_wrap=True)
    for name in ("steps", "first reward", "last reward", "mean reward", "format rate"):
        table.add_column(name, justify="right")
    for task in tasks:
        table.add_row(
            task.task, str(task.n_logged), _number(task.first_reward), _number(task.last_reward),
            _number(task.mean_reward), _number(task.mean_format),
        )  # fmt: skip
    return table


def make_train(backends: Mapping[str, BackendFactory]) -> Callable[..., None]:
    """The ``train`` command, running on the given backends (the CLI layer supplies them)."""

    def train(
        recipe: Annotated[Path, typer.Argument(help="Training recipe (YAML).")],
        backend: Annotated[
            str | None, typer.Option("--backend", help="trl | openrlhf (default: the recipe's).")
        ] = None,
        model: Annotated[
            str | None,
            typer.Option("--model", help="Model folder, hf://ORG/NAME@REV or tiny:FAMILY."),
        ] = None,
        store: Annotated[Path | None, typer.Option("--store", help="Frame store folder.")] = None,
        max_steps: Annotated[
            int | None, typer.Option("--max-steps", help="Optimiser steps (overrides optim.steps).")
        ] = None,
        output: Annotated[Path | None, typer.Option("--output", help="Run folder.")] = None,
        resume: Annotated[
            bool, typer.Option("--resume", help="Continue the run in the output folder.")
        ] = False,
        dry_run: Annotated[
            bool, typer.Option("--dry-run", help="Check, write the run's inputs, do not train.")
        ] = False,
        plan_only: Annotated[
            bool,
            typer.Option(
                "--plan",
                help="Without store or model files: print and write (plan.json in the run "
                "folder) the argv, sizing, budgets, memory estimate and what is missing.",
            ),
        ] = False,
        as_json: Annotated[
            bool, typer.Option("--json", help="With --plan: print the plan as JSON.")
        ] = False,
    ) -> None:
        """Train a model with a recipe: checks everything first, then runs the backend.

        The run folder gets the resolved recipe, every spec's provenance, the library
        versions, `metrics.jsonl`, checkpoints and the trained model. Bad input (a missing
        spec or model, an algorithm the backend cannot run, a store built under another
        budget, a used output folder) is one line each, exit 1, and nothing is written.

        Examples:

          videorl-kit train recipes/tiny-grpo.yaml

          videorl-kit train recipes/tiny-grpo.yaml --max-steps 2 --output runs/try

          videorl-kit train recipes/tiny-grpo.yaml --output runs/try --resume --max-steps 4

          videorl-kit train recipes/qwen2.5-vl-7b-grpo.yaml --backend openrlhf --dry-run

          videorl-kit train recipes/qwen2.5-vl-7b-grpo.yaml --plan   # no store, no download
        """
        if as_json and not plan_only:
            raise UserError("--json goes with --plan")
        if plan_only:
            if dry_run or resume:
                raise UserError("--plan writes only plan.json: leave out --dry-run and --resume")
            _plan(backends, recipe, backend=backend, model=model, store=store,
                  max_steps=max_steps, output=output, as_json=as_json)  # fmt: skip
            return
        from videorl_kit.train.plan import plan_training
        from videorl_kit.train.run import run_training

        plan = plan_training(
            recipe, backend=backend, model=model, store=store, max_steps=max_steps,
            output=output, resume=resume, backends=backends,
        )  # fmt: skip
        factory = backends.get(plan.backend)
        if factory is None:
            raise UserError(f"backend {plan.backend!r} is not available in this installation")
        warn = TerminalConsole(stderr=True, soft_wrap=True, markup=False)
        for line in plan.warnings:
            warn.print(Text.assemble(("warning:", "yellow"), f" {line}"), highlight=False)
        report = run_training(plan, factory(), dry_run=dry_run)
        _print_report(report, dry_run)
        if dry_run:
            TerminalConsole(soft_wrap=True, markup=False).print(_data_line(plan), highlight=False)

    return train


def _plan(backends: Mapping[str, BackendFactory], recipe: Path, *, as_json: bool,
          **overrides: Any) -> None:  # fmt: skip
    from videorl_kit.train.cluster_plan import assemble_plan, draft_plan, write_plan

    draft = draft_plan(recipe, backends=backends, **overrides)
    factory = backends.get(draft.backend)
    if factory is None:
        raise UserError(f"backend {draft.backend!r} is not available in this installation")
    backend = factory()
    if not hasattr(backend, "plan"):
        raise UserError(f"backend {draft.backend!r} cannot plan a run (no plan step)")
    record = assemble_plan(draft, backend.plan(draft))
    path = write_plan(record, draft.output_dir)
    if as_json:
        typer.echo(json.dumps(record, indent=2))
        return
    console = TerminalConsole(soft_wrap=True, markup=False)
    for table in plan_tables(record):
        console.print(table)
    console.print(f"plan written to {path}", highlight=False, markup=False)


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {_value(v)}" for k, v in value.items())
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def plan_tables(record: dict[str, Any]) -> list[Table]:
    """Rich tables of a ``train --plan`` record (``videorl_kit.train.cluster_plan``).

    Example:
        >>> from videorl_kit.adapters.openrlhf.planning import plan_bundle
        >>> from videorl_kit.train.cluster_plan import assemble_plan, draft_plan
        >>> draft = draft_plan("recipes/qwen2.5-vl-7b-grpo.yaml", store="no-store")
        >>> [t.title for t in plan_tables(assemble_plan(draft, plan_bundle(draft)))]
        ['plan: qwen2-5-vl-7b-grpo (openrlhf)', 'launch', 'missing for a full run']
    """
    main = Table(title=f"plan: {record['recipe_id']} ({record['backend']})", show_header=False)
    main.add_column("what", style="bold", no_wrap=True)
    main.add_column("value", overflow="fold")
    main.add_row("model", record["model"])
    main.add_row("store", record["store"])
    main.add_row("run folder", record["output_dir"])
    for key, value in record["sizing"].items():
        main.add_row(f"sizing: {key}", _value(value))
    steps = record["steps"]
    main.add_row("steps", f"{steps['steps']} × {steps['prompts_per_step']} prompts = "
                 f"{steps['prompts_consumed']} prompts")  # fmt: skip
    samples = (
        "unknown" if steps["samples"] is None else f"{steps['samples']} ({steps['samples_from']})"
    )
    main.add_row("samples", samples)
    main.add_row("epochs", _value(steps["epochs"]))
    budget = record["budget"]
    for key in ("completions_per_step", "max_frames_per_sample", "max_visual_tokens_per_sample",
                "max_prompt_tokens", "max_completion_tokens", "max_tokens_per_step",
                "max_frames_per_step"):  # fmt: skip
        main.add_row(f"budget: {key.replace('_', ' ')}", f"{budget[key]:,}")
    main.add_row("budget assumes", budget["assumes"])
    memory = record["memory"]
    if memory.get("per_gpu_gib"):
        parts = memory["per_gpu_gib"]
        model = memory["model"]
        main.add_row("model size", f"{model['params_b']} B parameters ({model['from']})")
        main.add_row("memory per GPU (estimate)", f"{parts['total']} GiB: " + ", ".join(
            f"{k} {v}" for k, v in parts.items() if k != "total"))  # fmt: skip
        main.add_row("memory formula", memory["formula"])
    else:
        main.add_row("memory per GPU (estimate)", "unknown (model size unknown)")
    for note in record["notes"]:
        main.add_row("note", note)
    launch = Table(title="launch", show_header=False)
    launch.add_column("what", style="bold", no_wrap=True)
    launch.add_column("value", overflow="fold")
    for key, value in record["launch"].items():
        text = " ".join(value) if key == "argv" else _value(value)
        launch.add_row(key, text)
    for name, entry in record["placeholders"].items():
        estimate = "" if entry["estimate"] is None else f"; estimate {entry['estimate']}"
        launch.add_row(
            name, f"{entry['flag']}: {entry['means']} (needs {entry['needs']}{estimate})"
        )
    missing = Table(title="missing for a full run")
    missing.add_column("what", overflow="fold")
    missing.add_column("command", overflow="fold")
    for item in record["missing"]:
        missing.add_row(item["what"], item["command"])
    if not record["missing"]:
        missing.add_row("nothing", "-")
    return [main, launch, missing]


def _data_line(plan: TrainPlan) -> str:
    from videorl_kit.train.plan import epochs

    optim = plan.recipe.optim
    per_task = ", ".join(f"{task} {n}" for task, n in plan.samples.items())
    return (
        f"data: {sum(plan.samples.values())} ready prompts ({per_task}); {optim.steps} steps x "
        f"{optim.prompts_per_step} prompts = {optim.steps * optim.prompts_per_step}: "
        f"{epochs(plan.loaded, plan.samples)} epochs"
    )


def _print_report(report: RunReport, dry_run: bool) -> None:
    console = TerminalConsole(soft_wrap=True, markup=False)
    if dry_run:
        console.print_json(json.dumps(report.prepared, default=str))
        console.print(
            f"dry run: wrote the run's inputs to {report.output_dir}, trained nothing", markup=False
        )
        return
    if report.tasks:
        console.print(task_table(report.tasks))
    console.print(f"run: {report.output_dir}", markup=False)
    plot_it = shlex.join(["videorl-kit", "plot", path_arg(report.output_dir)])
    console.print(f"plot it: {plot_it}", markup=False, highlight=False)


def plot(
    run_dir: Annotated[Path, typer.Argument(help="A training run folder (has metrics.jsonl).")],
) -> None:
    """Write PNG curves of a run: reward per task, format rate, KL, response length.

    Examples:

      videorl-kit plot runs/tiny-grpo
    """

    for path in plot_run(run_dir):
        echo(str(path))


def _clip(text: Any, limit: int) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def inspect(
    run_dir: Annotated[Path, typer.Argument(help="A training run folder.")],
    step: Annotated[
        int | None, typer.Option("--step", help="Show this logged step (default: the latest).")
    ] = None,
    full: Annotated[
        bool, typer.Option("--full", help="Print whole prompts and responses, not clipped.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the records as JSON lines.")
    ] = False,
) -> None:
    """Show a run's latest logged completions: prompt, response, extracted answer, gold, reward.

    The TRL backend writes a sample of completions to `completions.jsonl` in the run folder
    at step 1 and every `logging.completions_every` steps.

    Examples:

      videorl-kit inspect runs/tiny-grpo

      videorl-kit inspect runs/tiny-grpo --step 10 --full
    """
    path = run_dir / COMPLETIONS_FILE
    if not path.is_file():
        raise UserError(
            f"{run_dir}: no {COMPLETIONS_FILE} (a TRL run writes it at step 1 and every "
            "logging.completions_every steps)"
        )
    shown, records = latest_completions(path, step)
    if not records:
        what = "no completions logged yet" if step is None else f"no completions at step {step}"
        raise UserError(f"{path}: {what}")
    if as_json:
        for record in records:
            typer.echo(json.dumps(record))
        return
    limit = 10_000 if full else 160
    table = Table(title=f"{run_dir}: completions at step {shown}", show_lines=True)
    for name in ("task", "type", "prompt", "response", "extracted", "gold", "reward"):
        table.add_column(name, overflow="fold")
    for r in records:
        table.add_row(
            str(r.get("task")), str(r.get("problem_type") or "-"), _clip(r.get("prompt"), limit),
            _clip(r.get("response"), limit), _clip(r.get("extracted"), 40),
            _clip(r.get("gold"), 40),
            _number(r.get("reward")) if r.get("status") == "ok" else str(r.get("status")),
        )  # fmt: skip
    TerminalConsole(soft_wrap=True, markup=False).print(table)


def register(app: typer.Typer, backends: Mapping[str, BackendFactory] | None = None) -> None:
    """Add ``tiny-model``, ``train`` (on ``backends``, by name), ``plot`` and ``inspect``."""
    app.command("tiny-model")(tiny_model)
    app.command("train")(make_train(backends or {}))
    app.command("plot")(plot)
    app.command("inspect")(inspect)
