"""Reward commands: ``videorl-kit reward score`` and ``videorl-kit reward explain``.

Input of ``score`` (JSONL, one object per line): ``problem_type``, ``response``, ``answer``,
optional ``options``; with ``--spec``, a line may instead be ``{"id", "response"}`` and the
spec's data supply the sample's gold, options and problem type (per-row routing,
:class:`~videorl_kit.rewards.task.TaskReward`). Output: one JSON object per input line, in
order, with ``accuracy``, ``format``, ``overall``, ``status`` and ``details`` (plus ``line``).
A malformed or blank line, or an id the spec's data do not have, gives ``status:
unverifiable`` with ``details.error`` naming the line; a verifier that raises gives ``status:
error`` with ``details.error_type`` and ``details.error``; the file is never aborted. The
summary counts both.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from videorl_kit.core.errors import UserError
from videorl_kit.core.problem_types import canonical_problem_type
from videorl_kit.core.safe_text import terminal_text, to_json
from videorl_kit.core.terminal import echo_json
from videorl_kit.rewards import router
from videorl_kit.rewards.task import TaskReward
from videorl_kit.spec import SpecError, load_spec
from videorl_kit.spec.data import iter_samples

JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
SpecOption = Annotated[
    Path | None,
    typer.Option(
        "--spec",
        help="Task spec whose problem type, verifier, format rule and weights are used.",
    ),
]
#: Rows shown in the table of ``reward score`` (the summary covers every line).
TABLE_ROWS = 50


def _error_row(line_no: int, message: str) -> dict[str, Any]:
    return {
        "line": line_no,
        "accuracy": 0.0,
        "format": 0.0,
        "overall": 0.0,
        "status": "unverifiable",
        "details": {"error": f"line {line_no}: {message}"},
    }


def _load_spec(spec_path: Path) -> Any:

    try:
        return load_spec(spec_path)
    except SpecError as exc:
        raise UserError(str(exc)) from None
    except FileNotFoundError:
        raise UserError(f"{spec_path}: no such spec file") from None


def _task_reward(spec: Any, spec_path: Path) -> Any:

    try:
        return TaskReward.from_spec(spec)
    except (ValueError, LookupError) as exc:
        raise UserError(f"{spec_path}: {exc}") from None


class _Scorer:
    """Turns JSONL lines into result rows: by the spec's task (per-row routing), else by type."""

    def __init__(self, spec: Any | None = None, spec_path: Path | None = None) -> None:
        self.spec = spec
        self.task = _task_reward(spec, spec_path or Path("spec")) if spec is not None else None
        self.by_type: dict[str, Any] = {}
        self._samples: dict[str, Any] | None = None

    def _function_for(self, problem_type: Any) -> Any:

        if self.task is not None:
            return self.task.function_for(problem_type)
        ptype = canonical_problem_type(str(problem_type))
        if ptype.value not in self.by_type:
            self.by_type[ptype.value] = router.reward_function_for(ptype)
        return self.by_type[ptype.value]

    def _sample(self, sample_id: str) -> Any:
        """The spec's sample with this id (its data are read on first use)."""

        if self._samples is None:
            self._samples = {}
            for sample in iter_samples(self.spec):
                self._samples.setdefault(sample.sample_id, sample)
        return self._samples.get(sample_id)

    def row(self, line_no: int, line: str) -> dict[str, Any]:
        if not line.strip():
            return _error_row(line_no, "blank line")
        try:
            item = json.loads(line)
        except ValueError as exc:
            return _error_row(line_no, f"not valid JSON ({exc})")
        if not isinstance(item, dict):
            return _error_row(line_no, f"expected a JSON object, got {type(item).__name__}")
        if "response" not in item:
            return _error_row(line_no, "missing field(s) 'response'")
        if "answer" not in item and self.task is not None and "id" in item:
            return self._row_by_id(line_no, str(item["id"]), item["response"])
        if "answer" not in item and "id" in item:
            return _error_row(line_no, "a line with only 'id' and 'response' needs --spec SPEC")
        missing = [] if "answer" in item else ["answer"]
        if "problem_type" not in item and self.task is None:
            missing.insert(0, "problem_type")
        if missing:
            return _error_row(line_no, f"missing field(s) {', '.join(map(repr, missing))}")
        try:
            fn = self._function_for(item.get("problem_type") or None)
        except (ValueError, LookupError) as exc:
            return _error_row(line_no, str(exc))
        result = fn(item["response"], item["answer"], item.get("options"))
        return {"line": line_no, **result.to_dict(), "problem_type": fn.problem_type.value}

    def _row_by_id(self, line_no: int, sample_id: str, response: Any) -> dict[str, Any]:
        sample = self._sample(sample_id)
        if sample is None:
            return _error_row(
                line_no,
                f"unknown sample id {sample_id!r}: not in the data of task {self.task.task_id}",
            )
        result = self.task.score_sample(sample, response)
        row = {"line": line_no, "id": sample_id, **result.to_dict()}
        if sample.problem_type is not None:
            row["problem_type"] = sample.problem_type.value
        return row


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        handle = path.open(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None
    with handle:
        yield from enumerate(handle, start=1)


def score(
    file: Annotated[
        Path,
        typer.Argument(help="JSONL: problem_type, response, answer, options?; or id, response."),
    ],
    spec: SpecOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object per input line.")
    ] = False,
    out: Annotated[
        Path | None, typer.Option("--out", help="Also write the JSON lines to this file.")
    ] = None,
) -> None:
    """Score model responses; one result per input line, in order.

    Each line is a JSON object with `problem_type`, `response`, `answer` and optional
    `options`. With `--spec`, the spec's verifiers, params, format rule, weights and answer
    source are used (`problem_type` may then be omitted for a one-type spec), and a line may be
    just `{"id", "response"}`: the spec's data supply that sample's gold, options and problem
    type. A malformed or blank line, or an unknown id, gives `status: unverifiable` with
    `details.error` naming the line; a verifier that raises gives `status: error` (both score
    0: mask them): one output line per input line, always.

    Examples:

      videorl-kit reward score rollouts.jsonl

      videorl-kit reward score rollouts.jsonl --spec task_specs/synth-count.yaml --json

      videorl-kit reward score responses.jsonl --spec task_specs/synth-count.yaml

      videorl-kit reward score rollouts.jsonl --out scored.jsonl
    """
    scorer = _Scorer(_load_spec(spec), spec) if spec is not None else _Scorer()
    rows: list[dict[str, Any]] = []
    sink = None
    if out is not None:
        try:
            sink = out.open("w", encoding="utf-8")
        except OSError as exc:
            raise UserError(f"{out}: cannot write ({exc.strerror or exc})") from None
    try:
        for line_no, line in _lines(file):
            try:
                row = scorer.row(line_no, line)
            except UserError:  # the command cannot run at all (e.g. no code isolation here)
                raise
            except Exception as exc:  # a verifier bug costs this line, never the lines after it
                row = _error_row(line_no, f"scoring failed ({type(exc).__name__})")
            text = to_json(row)  # a lone surrogate in a response must not end the output
            if as_json:
                echo_json(text)
            if sink is not None:
                sink.write(text + "\n")
            rows.append(row)
    finally:
        if sink is not None:
            sink.close()
    if not as_json:
        _print_table(file, rows, out)


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    graded = [r for r in rows if r["status"] == "ok"]
    unverifiable = [r for r in rows if r["status"] == "unverifiable"]
    n = len(graded)
    return {
        "n_lines": len(rows),
        "n_graded": n,
        "n_unverifiable": len(unverifiable),
        "n_malformed": sum(1 for r in unverifiable if "error" in r["details"]),
        "n_errors": sum(1 for r in rows if r["status"] == "error"),
        "mean_accuracy": sum(r["accuracy"] for r in graded) / n if n else 0.0,
        "mean_format": sum(r["format"] for r in graded) / n if n else 0.0,
        "mean_overall": sum(r["overall"] for r in graded) / n if n else 0.0,
    }


def _print_table(file: Path, rows: list[dict[str, Any]], out: Path | None) -> None:
    from rich.table import Table

    from videorl_kit.core.terminal import TerminalConsole

    console = TerminalConsole(soft_wrap=True, markup=False)
    table = Table(title=f"rewards for {file}")
    for column in ("line", "type", "status", "accuracy", "format", "overall", "answer / reason"):
        table.add_column(column, justify="right" if column in ("accuracy", "format") else "left")
    for row in rows[:TABLE_ROWS]:
        details = row["details"]
        note = details.get("error") or details.get("reason") or details.get("extracted") or ""
        table.add_row(
            str(row["line"]),
            terminal_text(str(row.get("problem_type", ""))),
            row["status"],
            f"{row['accuracy']:.3f}",
            f"{row['format']:.0f}",
            f"{row['overall']:.3f}",
            terminal_text(str(note)[:80]),
        )
    console.print(table)
    if len(rows) > TABLE_ROWS:
        console.print(f"… {len(rows) - TABLE_ROWS} more lines (use --json for all)")
    s = _summary(rows)
    console.print(
        f"{s['n_lines']} lines: {s['n_graded']} graded, {s['n_unverifiable']} unverifiable "
        f"({s['n_malformed']} malformed), {s['n_errors']} errors; "
        f"mean accuracy {s['mean_accuracy']:.3f}, "
        f"mean format {s['mean_format']:.3f}, mean overall {s['mean_overall']:.3f}"
    )
    if out is not None:
        console.print(f"wrote {len(rows)} results to {out}", markup=False)


def _read_line(ref: str) -> dict[str, Any]:
    path_text, sep, number = ref.rpartition(":")
    if not sep or not number.isdigit() or int(number) < 1:
        raise UserError(f"--line must be FILE:N with N >= 1, got {ref!r}")
    path, wanted = Path(path_text), int(number)
    found: str | None = None
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for line_no, text in enumerate(handle, start=1):
                if line_no == wanted:
                    found = text
                    break
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if found is None:
        raise UserError(f"{path}: has no line {wanted}")
    try:
        item = json.loads(found)
    except ValueError as exc:
        raise UserError(f"{path}:{wanted}: not valid JSON ({exc})") from None
    if not isinstance(item, dict):
        raise UserError(f"{path}:{wanted}: expected a JSON object")
    return item


def _parse_options(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    if len(values) == 1 and values[0].lstrip().startswith("["):
        try:
            decoded = json.loads(values[0])
        except ValueError as exc:
            raise UserError(f"--options: not a JSON list ({exc})") from None
        if not isinstance(decoded, list):
            raise UserError("--options: expected a JSON list")
        return [str(v) for v in decoded]
    return list(values)


def explain(
    problem_type: Annotated[
        str | None, typer.Option("--type", help="Problem type (aliases accepted).")
    ] = None,
    response: Annotated[str | None, typer.Option("--response", help="Model output.")] = None,
    answer: Annotated[str | None, typer.Option("--answer", help="Ground truth.")] = None,
    options: Annotated[
        list[str] | None,
        typer.Option("--options", help="An option (repeat the flag), or a JSON list."),
    ] = None,
    line: Annotated[
        str | None, typer.Option("--line", help="Take the input from line N of FILE (FILE:N).")
    ] = None,
    spec: SpecOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show every step of scoring one response: extraction, format, verifier, scores.

    Examples:

      videorl-kit reward explain --type "multiple choice" --response "The answer is (C)." --answer C

      videorl-kit reward explain --type mcq --response "<answer>Blue</answer>" --answer B
      --options "A. Red" --options "B. Blue"

      videorl-kit reward explain --line rollouts.jsonl:7
    """

    item: dict[str, Any] = _read_line(line) if line else {}
    problem_type = problem_type or item.get("problem_type")
    response = response if response is not None else item.get("response")
    gold = answer if answer is not None else item.get("answer")
    opts = _parse_options(options) if options else item.get("options")
    if spec is not None:
        task = _task_reward(_load_spec(spec), spec)
        try:
            fn = task.function_for(problem_type or None)
        except (ValueError, LookupError) as exc:
            raise UserError(f"{spec}: {exc}") from None
    else:
        if not problem_type:
            raise UserError("give --type (or --line FILE:N with a problem_type, or --spec)")
        try:
            fn = router.reward_function_for(canonical_problem_type(str(problem_type)))
        except (ValueError, LookupError) as exc:
            raise UserError(str(exc)) from None
    if response is None or gold is None:
        raise UserError("give --response and --answer (or --line FILE:N)")
    steps = fn.explain(response, gold, opts)
    if as_json:
        echo_json(to_json(steps, indent=2))
        return
    _print_steps(steps)


def _print_steps(steps: dict[str, Any]) -> None:
    from rich.table import Table

    from videorl_kit.core.terminal import TerminalConsole

    console = TerminalConsole(soft_wrap=True, markup=False)
    ex, fmt, result = steps["extraction"], steps["format"], steps["result"]
    table = Table(show_header=False, title="reward explain")
    table.add_column("step", style="bold")
    table.add_column("value")
    rows = [
        ("problem type", steps["problem_type"]),
        ("verifier", f"{steps['verifier']} {json.dumps(steps['params'])}"),
        ("raw response", steps["raw"]),
        ("special tokens removed", str(ex["special_tokens_removed"])),
        (
            "think blocks",
            f"{ex['think_blocks']}{' (unterminated)' if ex['unterminated_think'] else ''}",
        ),
        ("text outside think", ex["outside_think"]),
        ("answer blocks", json.dumps(ex["answer_blocks"], ensure_ascii=False)),
        ("final statement", str(ex["final_statement"])),
        ("extracted answer", f"{ex['answer']!r} (from {ex['source']})"),
        ("hedge", str(ex["hedge"]) + (f": {ex['reason']}" if ex["reason"] else "")),
        ("parsed prediction", str(result["details"].get("pred", "—"))),
        ("parsed gold", str(result["details"].get("gold", steps["gold"]))),
        ("options", json.dumps(steps["options"], ensure_ascii=False)),
        (
            "format",
            f"{fmt['score']:.0f} ({steps['format_rule']})"
            + (f": {fmt['reason']}" if fmt["reason"] else ""),
        ),
        ("accuracy", f"{result['accuracy']:.4f}"),
        (
            "overall",
            f"{result['overall']:.4f} = {steps['weights']['accuracy']}·accuracy "
            f"+ {steps['weights']['format']}·format",
        ),
        ("status", result["status"]),
    ]
    reason = result["details"].get("reason") or result["details"].get("error")
    if reason:
        rows.append(("reason", str(reason)))
    for step, value in rows:
        table.add_row(step, terminal_text(value))
    console.print(table)


def register(app: typer.Typer) -> None:
    """Add the ``reward`` command group (``score``, ``explain``) to the root app."""
    reward_app = typer.Typer(
        name="reward",
        help="Score model responses with the strict verifiers, or explain one score.",
        no_args_is_help=True,
    )
    reward_app.command("score")(score)
    reward_app.command("explain")(explain)
    app.add_typer(reward_app, name="reward")
