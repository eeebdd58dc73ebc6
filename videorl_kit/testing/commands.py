"""``videorl-kit reward check``: property-test a verifier against the verifier contract.

Hypothesis (the ``testing`` extra) is imported when the command runs, never at start-up.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from videorl_kit.core.errors import UserError
from videorl_kit.core.safe_text import to_json
from videorl_kit.core.terminal import echo_json

#: Characters of a message shown in the table (the full text is printed below it).
MESSAGE_CHARS = 90


def _json_option(value: str | None, flag: str, kind: type) -> Any:
    if value is None:
        return None
    try:
        decoded = json.loads(value)
    except ValueError as exc:
        raise UserError(f"{flag}: not valid JSON ({exc})") from None
    if not isinstance(decoded, kind):
        raise UserError(f"{flag}: expected a JSON {'object' if kind is dict else 'list'}")
    return decoded


def check(
    verifier: Annotated[
        str,
        typer.Argument(
            help="A registered verifier (numeric, numeric@2) or a class by its import path "
            "(mypkg.verifiers:Ordering)."
        ),
    ],
    problem_type: Annotated[
        str | None,
        typer.Option("--problem-type", help="The problem type to check it for (aliases accepted)."),
    ] = None,
    cases: Annotated[
        Path | None,
        typer.Option("--cases", help="A golden case file (JSONL, the kit's layout) to agree with."),
    ] = None,
    examples: Annotated[
        int, typer.Option("--examples", min=1, help="Inputs tried per searched property.")
    ] = 100,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Reproduce a run (random when left out).")
    ] = None,
    params: Annotated[
        str | None, typer.Option("--params", help="The verifier's params as a JSON object.")
    ] = None,
    golds: Annotated[
        list[str] | None,
        typer.Option("--gold", help="A gold to build responses around (repeat the flag)."),
    ] = None,
    options: Annotated[
        str | None, typer.Option("--options", help="The golds' options, as a JSON list.")
    ] = None,
    properties: Annotated[
        list[str] | None,
        typer.Option("--property", help="Check only this property (repeat the flag)."),
    ] = None,
    budget_ms: Annotated[
        float,
        typer.Option("--time-budget-ms", min=0.001, help="Time an input of up to 1 MB may take."),
    ] = 50.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Property-test a verifier against the verifier contract; exit 0 only when all hold.

    The properties: never raises (any response, gold or options), bounded time (1 MB
    inputs), deterministic (again, after other inputs, in another process), picklable,
    thread-safe, the gold's accepted forms score 1, wrong answers and hedges score below
    it, the gold only inside <think> scores 0, an unreadable gold is unverifiable, and the
    case file (--cases) agrees. A broken property shows Hypothesis's shrunk example as a
    line to paste into the case file, and the command that reproduces it.

    Examples:

      videorl-kit reward check numeric

      videorl-kit reward check numeric@2 --property hedges --seed 7

      videorl-kit reward check mypkg.verifiers:Ordering --problem-type ordering
      --cases tests/golden/ordering.jsonl
    """
    try:
        from videorl_kit.testing.check import check_verifier
    except ImportError as exc:
        raise UserError(
            f"reward check needs Hypothesis ({exc.name or exc}): pip install 'videorl-kit[testing]'"
        ) from None

    report = check_verifier(
        verifier,
        problem_type=problem_type,
        params=_json_option(params, "--params", dict),
        golds=golds or None,
        options=_json_option(options, "--options", list),
        cases=cases,
        examples=examples,
        seed=seed,
        time_budget_s=budget_ms / 1000.0,
        properties=properties or None,
    )
    if as_json:
        echo_json(to_json(report.to_dict(), indent=2))
    else:
        _print_report(report)
    if not report.ok:
        raise typer.Exit(1)


def _print_report(report: Any) -> None:
    from rich.table import Table
    from rich.text import Text

    from videorl_kit.core.terminal import TerminalConsole

    console = TerminalConsole(soft_wrap=True, highlight=False, markup=False)
    title = f"reward check {report.verifier} ({report.problem_type}), seed {report.seed}"
    table = Table(title=title)
    table.add_column("property")
    table.add_column("result")
    table.add_column("examples", justify="right")
    table.add_column("what broke / note")
    style = {"held": "green", "broken": "bold red", "skipped": "yellow"}
    for prop in report.properties:
        note = prop.message if len(prop.message) <= MESSAGE_CHARS else prop.message[:89] + "…"
        result = "BROKEN" if prop.broken else prop.status
        table.add_row(
            prop.name,
            Text(result, style=style[prop.status]),
            str(prop.examples),
            note,
        )
    console.print(table)
    for prop in report.broken():
        console.print(Text.assemble("\n", (prop.name, "bold red"), f": {prop.message}"))
        if prop.example and "expression" in prop.example:
            console.print(f"  input: {prop.example['expression']}")
        if prop.case_line:
            console.print("  case line (paste into the case file):")
            console.print(prop.case_line)
        console.print(f"  reproduce: {report.reproduce(prop.name)}")
    held = sum(p.status == "held" for p in report.properties)
    skipped = sum(p.status == "skipped" for p in report.properties)
    console.print(
        f"\n{held} held, {len(report.broken())} broken, {skipped} skipped "
        f"({report.examples} examples each)"
    )


def register(app: typer.Typer) -> None:
    """Add ``check`` to the root app's ``reward`` command group (registered before this)."""
    groups = [g.typer_instance for g in app.registered_groups if g.name == "reward"]
    if not groups or groups[0] is None:
        raise RuntimeError("register the reward command group before reward check")
    groups[0].command("check")(check)
