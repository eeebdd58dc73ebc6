"""Run decode tasks through Ray Data (``engine="ray"``).

The tasks become a Ray Dataset (``ray.data.from_items``) and decoding is a ``map_batches``
over its blocks (one CPU per block task, spread over the Ray cluster). Each block task
decodes its items in a supervised child process, with the same per-item time limit and
crash isolation as the local engine. The driver streams the results back with
``iter_rows`` into the same batch committer as the local engine. The driver, not Ray,
writes Lance: ``Dataset.write_lance`` only appends, so a retried Ray task could duplicate
rows, while the committer's ``merge_insert`` keeps every commit idempotent. The tables are
therefore identical to a local build.

When no Ray instance is running, one is started for the build (``ray.init(num_cpus=workers)``)
and shut down afterwards. If the Ray pipeline itself fails (e.g. a Ray worker died), the
items without a result are finished by the local engine.

Example:
    >>> from videorl_kit.store.worker import DecodeTask, decode_task
    >>> list(run_ray([], workers=2, decode_fn=decode_task))  # no tasks: Ray is not started
    []
"""

from __future__ import annotations

import logging
import os
import pickle
import sys
import warnings
from collections.abc import Iterator
from typing import Any

from videorl_kit.errors import UserError
from videorl_kit.store.worker import DecodeFn, DecodeResult, DecodeTask


class _DecodeBlock:
    """Ray ``map_batches`` function: decode one block of task records, one result row each.

    The decoding runs in a supervised child process (:func:`run_local` with one worker),
    so a decoder that hangs is killed after ``item_timeout_s`` and one that crashes fails
    only its own item, exactly as in a local build; the Ray task itself never hangs.
    """

    def __init__(self, decode_fn: DecodeFn, item_timeout_s: float | None, mp_context: str):
        self.decode_fn = decode_fn
        self.item_timeout_s = item_timeout_s
        self.mp_context = mp_context

    def __call__(self, batch: dict[str, Any]) -> Iterator[dict[str, list[Any]]]:
        from videorl_kit.store.engine_local import run_local

        tasks: list[DecodeTask] = [pickle.loads(raw) for raw in batch["task"]]
        results = run_local(
            tasks, workers=1, decode_fn=self.decode_fn, mp_context=self.mp_context,
            item_timeout_s=self.item_timeout_s,
        )  # fmt: skip
        for result in results:  # one small batch per result: frames stream out as they come
            yield {
                "cache_key": [result.task.cache_key],
                "status": [result.status],
                "result": [pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)],
            }


def _start_ray(workers: int) -> bool:
    try:
        import ray
    except ImportError:
        raise UserError(
            "--engine ray needs Ray Data: pip install 'videorl-kit[ray]' (ray[data]>=2.55)"
        ) from None
    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # Ray workers import the decode function by name: let them see the driver's import path
    paths = [p for p in sys.path if p and os.path.isdir(p)]
    with warnings.catch_warnings():
        # Ray fork-execs its helper processes; Lance's fork warning does not apply to them
        warnings.filterwarnings("ignore", message="lance is not fork-safe")
        ray.init(
            num_cpus=workers,
            include_dashboard=False,
            log_to_driver=False,
            logging_level="ERROR",
            runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(paths)}},
        )
    return True


def run_ray(
    tasks: list[DecodeTask],
    *,
    workers: int,
    decode_fn: DecodeFn,
    mp_context: str = "forkserver",
    item_timeout_s: float | None = None,
) -> Iterator[DecodeResult]:
    """Yield one :class:`DecodeResult` per task, decoded by Ray Data ``map_batches`` tasks.

    Each Ray task decodes one block of tasks in a supervised child process, so
    ``item_timeout_s`` bounds every item as in a local build.

    Example:
        >>> results = list(run_ray(tasks, workers=2, decode_fn=decode_task))  # doctest: +SKIP
        >>> len(results) == len(tasks)                                      # doctest: +SKIP
        True
    """
    if not tasks:
        return
    started_here = _start_ray(workers)
    import ray

    done: set[str] = set()
    ray_data_logger = logging.getLogger("ray.data")
    level = ray_data_logger.level
    ray_data_logger.setLevel(logging.WARNING)  # no per-dataset INFO lines over the progress bar
    try:
        with warnings.catch_warnings():  # Ray's own deprecated-option notices, not ours
            warnings.simplefilter("ignore", DeprecationWarning)
            context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        records = [{"task": pickle.dumps(t, protocol=pickle.HIGHEST_PROTOCOL)} for t in tasks]
        dataset = ray.data.from_items(
            records, override_num_blocks=min(len(records), max(1, 4 * workers))
        ).map_batches(
            _DecodeBlock(decode_fn, item_timeout_s, mp_context),
            batch_size=None,  # one block = one batch = one supervised decode process
            batch_format="numpy",
            num_cpus=1,
        )
        try:
            for row in dataset.iter_rows():
                result: DecodeResult = pickle.loads(row["result"])
                done.add(result.task.cache_key)
                yield result
        except Exception:  # the pipeline failed as a whole: finish locally, isolating crashes
            from videorl_kit.store.engine_local import run_local

            remaining = [t for t in tasks if t.cache_key not in done]
            yield from run_local(
                remaining, workers=workers, decode_fn=decode_fn, mp_context=mp_context,
                item_timeout_s=item_timeout_s,
            )  # fmt: skip
    finally:
        ray_data_logger.setLevel(level)
        if started_here:
            ray.shutdown()
