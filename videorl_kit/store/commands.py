"""Store commands: ``build-cache`` and ``cache status | verify | repair | export``."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from videorl_kit.core.errors import UserError
from videorl_kit.core.safe_text import one_line
from videorl_kit.core.terminal import TerminalConsole
from videorl_kit.spec.loader import discover_spec_paths
from videorl_kit.store.build_config import BuildConfig
from videorl_kit.store.defaults import (
    DEFAULT_BATCH_ITEMS,
    DEFAULT_ITEM_TIMEOUT_S,
    EXIT_BUILD_FAILED,
)
from videorl_kit.store.errors import repair_hint

JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
StoreOption = Annotated[Path, typer.Option("--store", help="Store folder (Lance tables).")]
SpecCheckOption = Annotated[
    list[str] | None,
    typer.Option(
        "--spec",
        help="Task spec (file or folder, repeatable) to check the samples against "
        "(default: the spec files the store recorded).",
    ),
]

cache_app = typer.Typer(
    name="cache",
    help="Inspect, verify and export a frame cache built by `build-cache`.",
    no_args_is_help=True,
)


def _console(stderr: bool = False) -> TerminalConsole:
    return TerminalConsole(soft_wrap=True, stderr=stderr, markup=False)


def _print_json(payload: Any) -> None:
    typer.echo(json.dumps(payload, indent=2, sort_keys=False, default=str))


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.1f} TiB"


def build_cache_command(
    specs: Annotated[list[str], typer.Argument(metavar="SPEC...", help="Spec files or folders.")],
    store: StoreOption,
    workers: Annotated[
        int | None,
        typer.Option("--workers", "-w", min=1, help="Decoding processes (default: CPUs)."),
    ] = None,
    as_json: JsonOption = False,
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", help="Decode items recorded in `failures` again.")
    ] = False,
    engine: Annotated[
        str, typer.Option("--engine", help="local (process pool) or ray (Ray Data).")
    ] = "local",
    decoder: Annotated[
        str,
        typer.Option(
            "--decoder",
            help="Video decoder: pyav (default; seeks, skips unneeded frames), decord or "
            "torchcodec (optional extras). Part of the cache key.",
        ),
    ] = "pyav",
    max_visual_tokens: Annotated[
        int | None,
        typer.Option(
            "--max-visual-tokens", min=1, help="Skip media items with more visual tokens."
        ),
    ] = None,
    max_prompt_tokens: Annotated[
        int | None,
        typer.Option(
            "--max-prompt-tokens", min=1, help="Mark samples with longer prompts skipped."
        ),
    ] = None,
    rehash: Annotated[
        bool, typer.Option("--rehash", help="Hash every file again (ignore size+mtime memo).")
    ] = False,
    batch_items: Annotated[
        int,
        typer.Option("--batch-items", min=1, help="Items per commit (crash loses at most one)."),
    ] = DEFAULT_BATCH_ITEMS,
    item_timeout: Annotated[
        float,
        typer.Option(
            "--item-timeout",
            min=0,
            metavar="S",
            help="Seconds one item may take to decode; a hung decoder is killed and the "
            "item fails (0: no limit).",
        ),
    ] = DEFAULT_ITEM_TIMEOUT_S,
    fail_on_error: Annotated[
        bool,
        typer.Option(
            "--fail-on-error", help=f"Exit {EXIT_BUILD_FAILED} if any input failed to decode."
        ),
    ] = False,
    repair: Annotated[
        bool,
        typer.Option("--repair", help="Repair a damaged store first (see `cache repair`)."),
    ] = False,
) -> None:
    """Decode every distinct video/image of the specs once into a Lance store.

    Every input ends as ok (a frames row), failed (a failures row with the reason) or
    skipped (a named rule), and `n_input == n_ok + n_failed + n_skipped` is printed, with
    the skipped samples grouped by rule and example rows.
    Re-running adds nothing; an interrupted build resumes where its last commit ended.
    Failed items are retried only with --retry-failed. A decode that hangs longer than
    --item-timeout seconds is killed (its worker is replaced) and the item fails.

    Exit status: 0 when the build produced something usable; 3 when no input ended ok
    (every one failed or was skipped) or, with --fail-on-error, when any input failed;
    1 for a user error (a bad spec, store or flag value); 2 for a usage error.

    Examples:

      videorl-kit build-cache task_specs/*.yaml --store cache/

      videorl-kit build-cache task_specs/synth-count.yaml --store cache/ --workers 4 --json

      videorl-kit build-cache task_specs/ --store cache/ --engine ray --retry-failed

      videorl-kit build-cache task_specs/*.yaml --store cache/ --item-timeout 60

      videorl-kit build-cache task_specs/*.yaml --store cache-tc/ --decoder torchcodec

      videorl-kit build-cache task_specs/*.yaml --store cache/ --repair
    """
    from videorl_kit.store.builder import build_cache
    from videorl_kit.store.identify import decoder_identity

    config = BuildConfig(
        workers=workers, engine=engine, decoder=decoder,  # type: ignore[arg-type]
        retry_failed=retry_failed, rehash=rehash, item_timeout_s=item_timeout,
        max_visual_tokens=max_visual_tokens, max_prompt_tokens=max_prompt_tokens,
        batch_items=batch_items,
    )  # fmt: skip
    paths = discover_spec_paths(list(specs))
    if not paths:
        raise UserError("no spec files given (base files starting with '_' are skipped)")
    decoder_identity("video", config.decoder)  # unavailable: one line, before any output
    repaired = _repair_before_build(store, workers, as_json) if repair else None
    _check_existing_store(store)
    if as_json:
        summary = build_cache(paths, store, config)
        payload = summary.as_dict()
        if repaired is not None:
            payload["repair"] = repaired.as_dict()
        _print_json(payload)
        _print_truncated(summary.truncated, summary.store)  # stderr: the JSON stays clean
    else:
        summary = _build_with_progress(paths, store, config)
        _print_summary(summary)
    code = summary.exit_code(fail_on_error=fail_on_error)
    if code and not as_json:
        why = "no input was cached" if summary.exit_code() else "an input failed (--fail-on-error)"
        _console(stderr=True).print(
            f"error: {why} ({summary.n_failed} failed, {summary.n_skipped} skipped); "
            f"exit status {code}",
            style="red",
            markup=False,
        )
    if code:
        raise typer.Exit(code)


def _build_with_progress(paths: list[Any], store: Path, config: BuildConfig) -> Any:
    from videorl_kit.store.builder import BuildProgress, build_cache

    columns = (
        TextColumn("{task.description}", style="bold", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(
            "ok {task.fields[ok]} · failed {task.fields[failed]} · skipped {task.fields[skipped]}"
        ),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=_console(stderr=True), transient=False) as bar:
        task = bar.add_task("hashing", total=None, ok=0, failed=0, skipped=0)

        def on_progress(event: BuildProgress) -> None:
            bar.update(
                task, description=event.phase, total=event.total, completed=event.done,
                ok=event.n_ok, failed=event.n_failed, skipped=event.n_skipped,
            )  # fmt: skip

        return build_cache(paths, store, config, progress=on_progress)


def _check_existing_store(store: Path) -> None:
    """Refuse a damaged or read-only store before any progress output (one line)."""
    from videorl_kit.store.lock import write_lock
    from videorl_kit.store.schema import TABLE_NAMES
    from videorl_kit.store.tables import StoreTables

    tables = StoreTables(store)
    if not tables.exists():
        return  # nothing to check yet: the build creates the store (under its write lock)
    tables.ensure_writable()  # a read-only store: one line, before touching its lock
    with write_lock(store):  # not while another build creates the store or commits to it
        # a store whose tables are not all there was interrupted while created (kits before
        # the write lock created frames.lance first): the build completes it, as it would
        if all(Path(tables.uri(name)).is_dir() for name in TABLE_NAMES):
            StoreTables.open(store).ensure_writable()


def _repair_before_build(store: Path, workers: int | None, quiet: bool) -> Any:
    """``build-cache --repair``: repair an existing store (None when there is none yet)."""
    from videorl_kit.store.repair import repair_store
    from videorl_kit.store.tables import StoreTables

    if not StoreTables(store).exists():
        return None
    report = repair_store(store, workers=workers or 1)
    if not quiet:
        _console(stderr=True).print(report.summary(), markup=False)
    return report


def _print_summary(summary: Any) -> None:
    console = _console()
    data = summary.as_dict()
    table = Table("", "count", title=f"build-cache → {summary.store}", show_header=False)
    table.add_row("inputs", str(summary.n_input))
    table.add_row("  media items", str(summary.n_media_items))
    table.add_row("  skipped data rows", str(summary.n_skipped_rows))
    table.add_row("ok", str(summary.n_ok))
    table.add_row("  already cached", str(summary.n_already_cached))
    table.add_row("  decoded now", str(summary.n_decoded))
    table.add_row("  of them from cut-short files", str(len(summary.truncated)))
    table.add_row("failed", str(summary.n_failed))
    table.add_row("skipped", str(summary.n_skipped))
    for rule, count in data["skipped_by_rule"].items():
        table.add_row(f"  {rule}", str(count))
    for name, count in data["failed_by_class"].items():
        table.add_row(f"  failed: {name}", str(count))
    table.add_row("samples ready/failed/skipped", (
        f"{summary.samples.n_ready}/{summary.samples.n_failed}/{summary.samples.n_skipped}"
        f" of {summary.samples.n_samples}"
    ))  # fmt: skip
    table.add_row("commits", str(summary.n_commits))
    table.add_row("seconds", f"{summary.seconds:.2f}")
    console.print(table)
    _print_skips(console, data["samples"]["skips"], "skipped samples")
    _print_failed_files(console, summary.failed_files, summary.store)
    mark = "holds" if summary.invariant_holds else "VIOLATED"
    console.print(
        f"n_input {summary.n_input} == n_ok {summary.n_ok} + n_failed {summary.n_failed} "
        f"+ n_skipped {summary.n_skipped} ({mark})",
        markup=False,
    )
    if summary.n_failed:
        console.print(
            "see the reasons with: videorl-kit cache status --store "
            f"{shlex.quote(str(summary.store))}; "
            "retry with --retry-failed",
            markup=False,
        )
    warned = summary.decode_warnings
    if warned:
        first = next(iter(warned))
        _console(stderr=True).print(
            f"warning: {len(warned)} item(s) decoded with warnings (kept in the row's "
            f"decode_warnings), e.g. {first}: {warned[first][0]}",
            style="yellow",
            markup=False,
        )
    _print_truncated(summary.truncated, summary.store)
    if summary.engine_fallback:
        _console(stderr=True).print(
            f"warning: --engine ray fell back to the local engine: {summary.engine_fallback}",
            style="yellow",
            markup=False,
        )


MAX_TRUNCATED_LINES = 20
"""``build-cache`` names at most this many cut-short sources, one warning line each."""

MAX_FAILED_LINES = 20
"""``build-cache`` names at most this many failed files, one line each (``--json``: all)."""

MAX_REASON_CHARS = 200
"""A failed file's reason is cut to this many characters on its line."""


def _shown_path(source: str) -> str:
    """``source`` relative to the working folder when it is inside it, on one line."""
    try:
        shown = str(Path(source).relative_to(Path.cwd()))
    except (ValueError, OSError):
        shown = source
    return one_line(shown)


def _print_failed_files(console: TerminalConsole, failed: dict[str, str], store: str) -> None:
    """The files that failed to decode, one line each: the file, then why."""
    if not failed:
        return
    console.print(f"failed files ({len(failed)}):", markup=False)
    for source, reason in sorted(failed.items())[:MAX_FAILED_LINES]:
        why = " ".join(reason.split())
        if len(why) > MAX_REASON_CHARS:
            why = why[: MAX_REASON_CHARS - 1] + "…"
        console.print(f"  {_shown_path(source)}: {one_line(why)}", markup=False, highlight=False)
    if len(failed) > MAX_FAILED_LINES:
        console.print(
            f"  and {len(failed) - MAX_FAILED_LINES} more; see videorl-kit cache status "
            f"--store {shlex.quote(str(store))}",
            markup=False,
        )


def _print_truncated(truncated: dict[str, str], store: str) -> None:
    """One warning line per source cached from a cut-short file: the file and the reason."""
    console = _console(stderr=True)
    for source, reason in sorted(truncated.items())[:MAX_TRUNCATED_LINES]:
        console.print(
            f"warning: {source}: cached from a cut-short file ({reason})",
            style="yellow",
            markup=False,
        )
    if len(truncated) > MAX_TRUNCATED_LINES:
        console.print(
            f"warning: and {len(truncated) - MAX_TRUNCATED_LINES} more cut-short file(s); "
            f"see videorl-kit cache status --store {shlex.quote(str(store))}",
            style="yellow",
            markup=False,
        )


def _print_skips(console: TerminalConsole, skips: dict[str, dict[str, Any]], title: str) -> None:
    """Skipped samples by rule: the count, then example rows (task, row number, reason)."""
    if not skips:
        return
    console.print(f"{title}:", markup=False)
    for rule, entry in skips.items():
        console.print(f"  {rule}: {entry['count']}", markup=False)
        for example in entry["examples"]:
            console.print(f"    {example}", markup=False, highlight=False)


@cache_app.command("status")
def status_command(store: StoreOption, as_json: JsonOption = False) -> None:
    """Show what a store holds: tables, budgets, failures, samples and the specs they came from.

    The specs section lists each task's spec file, version and content hash, the Hub files
    (repo, commit) it was built from and, for Hub data, the commit its rows were read at.

    Examples:

      videorl-kit cache status --store cache/

      videorl-kit cache status --store cache/ --json
    """
    from videorl_kit.store.samples import skip_summary
    from videorl_kit.store.tables import StoreTables
    from videorl_kit.store.verify import store_status

    info = store_status(store)
    info["samples"]["skips"] = skip_summary(StoreTables.open(store))
    if as_json:
        _print_json(info)
        return
    console = _console()
    table = Table("table", "rows", "version", "on disk", title=f"store {info['store']}")
    for name in ("frames", "failures", "samples", "trajectories"):
        t = info[name]
        table.add_row(name, str(t["rows"]), str(t["version"]), _fmt_bytes(t["disk_bytes"]))
    console.print(table)
    frames = info["frames"]
    console.print(
        f"{frames['frames']} frames, {_fmt_bytes(frames['frame_bytes'])} of uint8 pixels; "
        f"cache schema version {info['cache_schema_version']}",
        markup=False,
    )
    budgets = Table("budget", "modality", "rows", "parameters", title="budgets")
    for digest, value in info["budgets"].items():
        budgets.add_row(digest, value["modality"], str(value["rows"]),
                        json.dumps(value["budget"], sort_keys=True))  # fmt: skip
    console.print(budgets)
    if info["samples"]["by_task"]:
        samples = Table("task", "ready", "media_failed", "skipped", title="samples")
        for task_id, counts in info["samples"]["by_task"].items():
            samples.add_row(
                task_id, *(str(counts.get(k, 0)) for k in ("ready", "media_failed", "skipped"))
            )
        console.print(samples)
    _print_skips(console, info["samples"]["skips"], "skipped samples by rule")
    if info["specs"]:
        specs = Table("task", "version", "spec sha256", title="specs")
        specs.add_column("spec from", overflow="fold")  # paths and revisions in full
        specs.add_column("data from", overflow="fold")
        for source in info["specs"]:
            specs.add_row(
                source["task_id"], str(source["spec_version"]), source["spec_sha256"][:12],
                _spec_origin(source), _data_origin(source["data"]),
            )  # fmt: skip
        console.print(specs)
    if frames["truncated"]:
        cut = Table(title=f"cached from cut-short files ({len(frames['truncated'])})")
        cut.add_column("source", overflow="fold")
        cut.add_column("why it looks cut short", overflow="fold")
        for item in frames["truncated"]:
            cut.add_row(item["source_uri"], item["truncation"])
        console.print(cut)
    if frames["decode_warnings"]:
        warned = Table(title=f"decoded with warnings ({len(frames['decode_warnings'])})")
        warned.add_column("source", overflow="fold")
        warned.add_column("warnings", overflow="fold")
        for item in frames["decode_warnings"]:
            warned.add_row(item["source_uri"], "\n".join(item["warnings"]))
        console.print(warned)
    failures = info["failures"]
    if failures["rows"]:
        listing = Table(title=f"failures ({failures['rows']})")
        listing.add_column("source", overflow="fold")
        listing.add_column("error")
        listing.add_column("message", overflow="fold")
        listing.add_column("attempts")
        for item in failures["items"]:
            listing.add_row(
                item["source_uri"], item["error_class"], item["message"], str(item["attempts"])
            )
        console.print(listing)


def _spec_origin(source: dict[str, Any]) -> str:
    """The spec file, plus each Hub file it came from as ``repo@commit:path``."""
    hub = [f"{f.get('repo')}@{str(f.get('revision'))[:12]}:{f.get('path')}" for f in
           source["hub_files"]]  # fmt: skip
    return "\n".join([source["spec_file"] or "(in code)", *hub])


def _data_origin(data: dict[str, Any] | None) -> str:
    if data is None:
        return "local file"
    return f"{data['repo']}@{str(data['revision'])[:12]}:{data['file']}"


@cache_app.command("verify")
def verify_command(
    store: StoreOption,
    sample: Annotated[
        int, typer.Option("--sample", "-n", min=0, help="Rows to re-decode (0 = all rows).")
    ] = 8,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random row choice.")] = 0,
    tolerance: Annotated[
        int, typer.Option("--tolerance", min=0, max=255, help="Accepted max pixel difference.")
    ] = 0,
    specs: SpecCheckOption = None,
    as_json: JsonOption = False,
) -> None:
    """Re-decode a random sample of cached rows and compare them with the cache, and check
    every ready sample against its task spec's data row.

    Checks each row's metadata against its digest and its bytes against their checksums and
    sha256, the source's content hash, then the frame indices, timestamps and pixels of a
    fresh decode (bit-exact unless --tolerance). A source that is a FIFO or device is not read
    (the row is `unverifiable`, with the reason). Each ready sample's answer, options and
    problem type must equal its spec's data row, and its media keys must name the frames of
    the row's own files. Exits 1 if any row is corrupt or does not match, or any sample
    disagrees with its spec; `cache repair` fixes corrupt rows, `build-cache` again rewrites
    the samples from the specs.

    Examples:

      videorl-kit cache verify --store cache/

      videorl-kit cache verify --store cache/ --sample 0 --json

      videorl-kit cache verify --store downloaded/ --spec task_specs/ --sample 0
    """
    from videorl_kit.spec import load_spec
    from videorl_kit.store.verify import verify_store

    loaded = [load_spec(path) for path in discover_spec_paths(list(specs or []))]
    report = verify_store(
        store, sample=sample or None, seed=seed, tolerance=tolerance, specs=loaded
    )
    if as_json:
        _print_json(report.as_dict())
    else:
        console = _console()
        table = Table("cache key", "source", "status", "detail", title=f"verify {report.store}")
        for check in report.checked:
            reported = ("source_missing", "source_changed", "unverifiable")
            style = (
                "green" if check.status == "ok" else "yellow" if check.status in reported else "red"
            )
            table.add_row(
                check.cache_key[:16],
                check.source_uri,
                Text(check.status, style=style),
                check.detail,
            )
        console.print(table)
        console.print(f"{len(report.checked)} rows checked: {report.counts}", markup=False)
        if report.counts.get("corrupt"):
            console.print(repair_hint(report.store), markup=False)
        _print_sample_checks(console, report)
    if not report.ok:
        raise typer.Exit(1)


def _print_sample_checks(console: TerminalConsole, report: Any) -> None:
    """The samples part of ``cache verify``: each disagreement, unchecked tasks, the repair."""
    for problem in report.samples:
        console.print(Text(one_line(str(problem)), style="red"))
    for task, why in report.unchecked_tasks.items():
        console.print(Text(one_line(f"task {task}: samples not checked: {why}"), style="yellow"))
    console.print(
        f"{report.n_samples_checked} samples checked against their specs: "
        f"{len(report.samples)} disagree",
        markup=False,
    )
    if report.samples:
        console.print(
            f"build the samples again from the specs with `videorl-kit build-cache SPEC... "
            f"--store {shlex.quote(str(report.store))}` (the gold always comes from the spec)",
            markup=False,
        )


@cache_app.command("repair")
def repair_command(
    store: StoreOption,
    workers: Annotated[
        int, typer.Option("--workers", "-w", min=1, help="Processes that decode rows again.")
    ] = 1,
    as_json: JsonOption = False,
) -> None:
    """Repair a damaged store in place, so nobody has to delete it.

    Accepts a table whose newest manifest is gone at the version Lance still has, drops
    fragments whose data file is missing or truncated, checks every frames row (stored bytes
    against their checksum, frames against their sha256), decodes damaged or lost rows again
    from their source when it still exists and hashes the same, and removes what cannot be
    recovered, recording it in `failures`. Running it again changes nothing.

    Examples:

      videorl-kit cache repair --store cache/

      videorl-kit cache repair --store cache/ --workers 4 --json
    """
    from videorl_kit.store.repair import repair_store

    report = repair_store(store, workers=workers)
    if as_json:
        _print_json(report.as_dict())
    else:
        _console().print(report.summary(), markup=False)


@cache_app.command("export")
def export_command(
    store: StoreOption,
    out: Annotated[Path, typer.Option("--out", help="Folder for frame files and manifests.")],
    fmt: Annotated[str, typer.Option("--format", help="Image format: jpg or png.")] = "jpg",
    quality: Annotated[int, typer.Option("--quality", min=1, max=100, help="JPEG quality.")] = 95,
    specs: SpecCheckOption = None,
    as_json: JsonOption = False,
) -> None:
    """Export cached frames as image files plus manifest.jsonl and samples.jsonl.

    manifest.jsonl has one line per cached item (frame files, frame indices, timestamps,
    source fps, video_metadata); samples.jsonl lists ready samples with their frame files,
    for trainers that need paths (e.g. OpenRLHF). The samples are checked against their
    specs first (as `cache verify` does): a sample that disagrees refuses the export.

    Examples:

      videorl-kit cache export --store cache/ --out export/

      videorl-kit cache export --store cache/ --out export/ --format png --json
    """
    from videorl_kit.spec import load_spec
    from videorl_kit.store.verify import export_store

    if fmt not in ("jpg", "png"):
        raise UserError(f"--format must be jpg or png, not {fmt!r}")
    loaded = [load_spec(path) for path in discover_spec_paths(list(specs or []))]
    if as_json:
        report = export_store(store, out, fmt=fmt, quality=quality, specs=loaded)  # type: ignore[arg-type]
        _print_json(report.as_dict())
        return
    with Progress(TextColumn("export"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=_console(stderr=True)) as bar:  # fmt: skip
        task = bar.add_task("export", total=None)
        report = export_store(
            store, out, fmt=fmt, quality=quality, specs=loaded,  # type: ignore[arg-type]
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )  # fmt: skip
    for task_id, why in report.unchecked_tasks.items():
        _console().print(Text(one_line(f"task {task_id}: samples not checked: {why}"),
                              style="yellow"))  # fmt: skip
    _console().print(
        f"wrote {report.n_files} frame files of {report.n_items} items and {report.n_samples} "
        f"samples to {report.out} (manifest: {report.manifest})",
        markup=False,
    )


def register(app: typer.Typer) -> None:
    """Add ``build-cache`` and the ``cache`` group to the ``videorl-kit`` app."""
    app.command("build-cache")(build_cache_command)
    app.add_typer(cache_app, name="cache")
