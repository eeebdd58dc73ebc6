"""Run an eval that SIGKILLs its own process after N generate calls (for the resume test).

Usage: ``python -m tests.eval.interrupt_helper CONFIG.json`` where the JSON holds the
:class:`~videorl_kit.eval.runner.EvalConfig` fields plus ``kill_after`` (calls). The kill
happens after the backend answered but before the runner wrote that batch, like a crash in
the middle of a batch.
"""

from __future__ import annotations

import json
import os
import signal
import sys

from videorl_kit.eval import runner


def main(path: str) -> None:
    with open(path, encoding="utf-8") as handle:
        settings = json.load(handle)
    kill_after = settings.pop("kill_after")
    make_backend = runner.make_backend

    def dying_backend(config, tasks):
        backend = make_backend(config, tasks)
        generate = backend.generate
        calls = {"n": 0}

        def generate_then_die(requests):
            responses = generate(requests)
            calls["n"] += 1
            if calls["n"] > kill_after:
                os.kill(os.getpid(), signal.SIGKILL)
            return responses

        backend.generate = generate_then_die
        return backend

    runner.make_backend = dying_backend
    runner.run_eval(runner.EvalConfig(**settings))


if __name__ == "__main__":
    main(sys.argv[1])
