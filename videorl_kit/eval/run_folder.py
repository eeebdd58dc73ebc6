"""The run folder: ``run.json`` claims it for one configuration; the same one resumes it.

Example:
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "run"
    >>> claim_run_dir(out, {"seed": 0}) == claim_run_dir(out, {"seed": 0})
    True
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from videorl_kit.core.errors import UserError
from videorl_kit.core.out_folder import refuse_links
from videorl_kit.eval.records import content_hash
from videorl_kit.eval.samples_log import atomic_write_text

RUN_FILE = "run.json"


def claim_run_dir(out: Path, manifest: dict[str, Any]) -> str:
    """Create or resume ``out``; refuse a folder holding something else. Returns the run id.

    A folder that holds only ``run.json`` (a run that stopped before its first sample) is
    claimed again, whatever its configuration: there is nothing in it to mix.
    """
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file; give a folder for the run")
    refuse_links(out, f"--out {out}")
    run_file = out / RUN_FILE
    if run_file.is_file() and [p.name for p in out.iterdir()] == [RUN_FILE]:
        run_file.unlink()
    if run_file.is_file():
        try:
            previous = json.loads(run_file.read_text(encoding="utf-8"))
        except ValueError:
            raise UserError(f"{run_file}: unreadable; remove {out} to start over") from None
        known = previous.get("manifest", {})
        if known != manifest:
            keys = sorted(
                k for k in manifest.keys() | known.keys() if known.get(k) != manifest.get(k)
            )
            raise UserError(
                f"--out {out} holds a run with another configuration (differs in: "
                f"{', '.join(keys)}); use another --out, or remove it to start over"
            )
        return str(previous["run_id"])
    if out.exists() and any(out.iterdir()):
        raise UserError(f"--out {out} is not empty and is not an eval run folder (no {RUN_FILE})")
    out.mkdir(parents=True, exist_ok=True)
    run_id = f"{out.resolve().name}-{content_hash(manifest)[:12]}"
    atomic_write_text(run_file, json.dumps({"run_id": run_id, "manifest": manifest}, indent=2))
    return run_id
