"""A map-style dataset of ready samples with their cached frames, for PyTorch training loops.

Each item is one ``ready`` row of the ``samples`` table with its media read from the frames
table: ``task_id``, ``sample_id``, ``problem_type``, ``prompt``, ``answer``, ``options``
(the columns the TRL reward functions read, :mod:`videorl_kit.rewards.trl_functions`),
chat ``messages``, ``videos`` (uint8 ``T×H×W×3`` arrays) with their ``video_metadata``,
``images`` (``H×W×3``), and ``row``: the raw data row, for metrics per ``data_source`` or
any other column of the source data. :meth:`CachedSampleDataset.media` looks a sample's
cached frames up by id, and :attr:`CachedSampleDataset.collate_fn` batches items
(:mod:`videorl_kit.store.collate`: media as lists, token sequences padded).

With an HF processor (Qwen2.5-VL / Qwen3-VL) each item also has ``model_inputs``: the
processor runs with ``do_resize=False`` and ``do_sample_frames=False`` (the cache already
sampled and resized) and receives each video's ``video_metadata`` (source fps and
selected frame indices), so Qwen3-VL writes the right ``<t seconds>`` markers.

torch and transformers are imported only when an item is built with a processor (or a
batch of processed items is collated); ``torch.utils.data.DataLoader`` accepts the dataset
as it is (it implements ``__len__`` and ``__getitem__``).

Example:
    >>> import tempfile
    >>> from videorl_kit.spec import load_spec
    >>> from videorl_kit.store import build_cache
    >>> from videorl_kit.synth import write_demo_task
    >>> folder = tempfile.mkdtemp()
    >>> spec = load_spec(write_demo_task(folder))  # 2 clips and 2 stills, counting questions
    >>> _ = build_cache([spec], f"{folder}/store", workers=1)
    >>> dataset = CachedSampleDataset(f"{folder}/store", spec=spec)
    >>> item = dataset[0]
    >>> item["videos"][0].dtype, item["videos"][0].ndim, item["row"]["data_type"]
    (dtype('uint8'), 4, 'video')
    >>> videos, images = dataset.media(item["sample_id"])
    >>> len(videos), len(images), videos[0].modality, videos[0].frames.shape[-1]
    (1, 0, 'video', 3)
    >>> dataset.index_of("synth-image-count-0001")
    3
    >>> batch = dataset.collate_fn([dataset[i] for i in range(len(dataset))])
    >>> batch["problem_type"], [len(v) for v in batch["videos"]]
    (['numerical', 'numerical', 'numerical', 'numerical'], [1, 1, 0, 0])
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from videorl_kit.media.chat import video_messages
from videorl_kit.media.processor_inputs import processor_outputs
from videorl_kit.store.collate import collate_samples
from videorl_kit.store.commit import sql_in
from videorl_kit.store.errors import MissingKeyError, StoreMismatchError, rebuild_hint
from videorl_kit.store.reader import CachedFrames, FrameStore, budget_dict, require_budget
from videorl_kit.store.sample_check import FrameSources, check_dataset
from videorl_kit.store.samples import STATUS_READY
from videorl_kit.store.schema import SAMPLES_TABLE
from videorl_kit.store.tables import StoreTables

if TYPE_CHECKING:
    from videorl_kit.spec.models import BudgetSpec, TaskSpec

_SAMPLE_COLUMNS = [
    "task_id",
    "sample_id",
    "problem_type",
    "question",
    "options",
    "answer",
    "prompt",
    "system_prompt",
    "video_keys",
    "image_keys",
    "video_budget_hash",
    "image_budget_hash",
    "prompt_tokens_estimate",
    "row_json",
    "data_revision",
]


def processor_factor(processor: Any) -> int | None:
    """The resize factor (patch × merge) a Qwen-VL processor expects, or None if unknown.

    Example:
        >>> class P:  # a stand-in with the two attributes read
        ...     class video_processor:
        ...         patch_size, merge_size = 16, 2
        >>> processor_factor(P())
        32
    """
    video = getattr(processor, "video_processor", None) or getattr(
        processor, "image_processor", None
    )
    patch, merge = getattr(video, "patch_size", None), getattr(video, "merge_size", None)
    return int(patch) * int(merge) if patch and merge else None


def check_sample_budgets(
    tables: StoreTables, budget: BudgetSpec | dict[str, Any], rows: Sequence[dict[str, Any]]
) -> dict[str, str]:
    """Refuse ``rows`` whose media were not cached under ``budget``; return the checked hashes.

    ``budget`` is the trainer's ``BudgetSpec`` (``spec.budget``) or a dict with ``video``
    and ``image`` entries. Each modality the rows use is checked like
    :meth:`FrameStore.open` checks a budget (:func:`~videorl_kit.store.reader.require_budget`:
    the store must hold it), then every row's recorded budget hash must equal it: a store
    may also hold the same task built under another budget. Raises
    :class:`StoreMismatchError` saying which budget to build.

    Example:
        >>> import tempfile
        >>> tables = StoreTables.create(tempfile.mkdtemp())
        >>> check_sample_budgets(tables, {"video": {}, "image": {}}, [])
        {}
    """
    checked: dict[str, str] = {}
    for modality in ("video", "image"):
        used = [row for row in rows if row[f"{modality}_keys"]]
        if not used:
            continue
        part = budget[modality] if isinstance(budget, dict) else getattr(budget, modality)
        expected = require_budget(tables, modality, part)
        column = f"{modality}_budget_hash"
        stale = sorted({(r["task_id"], r[column]) for r in used if r[column] != expected})
        if stale:
            known = tables.budgets()
            found = "; ".join(
                f"task {task} with {digest} "
                f"({json.dumps(known.get(digest, {}).get('budget'), sort_keys=True)})"
                for task, digest in stale
            )
            raise StoreMismatchError(
                f"{tables.root}: samples were cached under another {modality} budget than the "
                f"expected {expected} ({json.dumps(budget_dict(part), sort_keys=True)}): "
                f"{found}; {rebuild_hint(str(tables.root))} with the spec that declares this "
                "budget"
            )
        checked[modality] = expected
    return checked


class CachedSampleDataset:
    """Ready samples of a store with their cached frames (optionally through an HF processor).

    Pass the trainer's task ``spec`` (or its ``budget``) to refuse a store whose frames were
    cached under other budgets: the same check, and message, as ``FrameStore.open(budget=)``.

    With a ``spec``, every sample of its task is also checked against the spec's data row
    (:mod:`videorl_kit.store.sample_check`): the gold answer, options and problem type must
    equal the row's and each media key must name the frames of the row's own file, else
    :class:`StoreMismatchError` names the task, the row and the repair (``build-cache``
    again). The gold a trainer scores with thus always comes from the spec, never from the
    store alone. Without a spec the rows are the store's copy: use that only to inspect a
    store you trust.

    See the module example for a built store; a store without the asked tasks is refused:

    Example:
        >>> import tempfile
        >>> from videorl_kit.store.tables import StoreTables
        >>> folder = StoreTables.create(tempfile.mkdtemp()).root
        >>> CachedSampleDataset(folder, task_ids=["count"])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        videorl_kit.store.errors.StoreMismatchError: ...: no ready samples for tasks count; ...
    """

    def __init__(
        self,
        store_dir: str | Path,
        *,
        task_ids: Sequence[str] | None = None,
        processor: Any | None = None,
        add_generation_prompt: bool = True,
        spec: TaskSpec | None = None,
        budget: BudgetSpec | dict[str, Any] | None = None,
        verify: bool = True,
    ):
        """Select the ready samples of ``task_ids`` (default: ``spec.id`` if a spec is given,
        else every task) and check them against ``budget`` (default: ``spec.budget``).
        ``verify=False`` skips the per-read checksum of the frames (a trusted store only)."""
        if spec is not None:
            task_ids = list(task_ids) if task_ids is not None else [spec.id]
            budget = budget if budget is not None else spec.budget
        tables = StoreTables.open(store_dir)
        self.frames = FrameStore(tables, verify=verify)
        self.processor = processor
        self.add_generation_prompt = add_generation_prompt
        condition = f"status = '{STATUS_READY}'"
        if task_ids:
            condition += f" AND {sql_in('task_id', list(task_ids))}"
        table = tables.table(SAMPLES_TABLE).to_table(columns=_SAMPLE_COLUMNS, filter=condition)
        rows = sorted(table.to_pylist(), key=lambda r: (r["task_id"], r["sample_id"]))
        self.rows: list[dict[str, Any]] = rows
        if task_ids and not rows:
            raise StoreMismatchError(
                f"{store_dir}: no ready samples for tasks {', '.join(task_ids)}; "
                f"{rebuild_hint(str(store_dir))}"
            )
        self.budget_hashes: dict[str, str] = (
            {} if budget is None else check_sample_budgets(tables, budget, rows)
        )
        if spec is not None:  # the gold and the media come from the spec's data rows
            check_dataset(tables, rows, spec, FrameSources.of(self.frames.metadata()))
        self._positions: dict[str, list[int]] = {}
        for index, row in enumerate(rows):
            self._positions.setdefault(row["sample_id"], []).append(index)

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def collate_fn(self) -> Callable[[Sequence[dict[str, Any]]], dict[str, Any]]:
        """:func:`~videorl_kit.store.collate.collate_samples` with the processor's pad token."""
        tokenizer = getattr(self.processor, "tokenizer", self.processor)
        pad = getattr(tokenizer, "pad_token_id", None)
        return partial(collate_samples, pad_token_id=int(pad) if pad is not None else 0)

    def index_of(self, sample_id: str, task_id: str | None = None) -> int:
        """Position of a ready sample, by id (and task, when two tasks share the id).

        Raises :class:`MissingKeyError` naming the id when it is not a ready sample here
        (absent, skipped or failed), or when it is ambiguous without ``task_id``.
        """
        found = self._positions.get(sample_id, [])
        if task_id is not None:
            found = [i for i in found if self.rows[i]["task_id"] == task_id]
        if len(found) == 1:
            return found[0]
        where = f"task {task_id}" if task_id is not None else "any task"
        if not found:
            raise MissingKeyError(
                f"{self.frames.root}: sample {sample_id!r} is not a ready sample of {where} "
                "(see `videorl-kit cache status` for skipped and failed samples)"
            )
        tasks = ", ".join(self.rows[i]["task_id"] for i in found)
        raise MissingKeyError(f"sample id {sample_id!r} is in tasks {tasks}: pass task_id")

    def media(
        self, sample_id: str, task_id: str | None = None
    ) -> tuple[list[CachedFrames], list[CachedFrames]]:
        """The cached ``(videos, images)`` of a sample, by id (see :meth:`index_of`)."""
        return self._media(self.rows[self.index_of(sample_id, task_id)])

    def _media(self, row: dict[str, Any]) -> tuple[list[CachedFrames], list[CachedFrames]]:
        videos = self.frames.get_many(row["video_keys"])
        images = self.frames.get_many(row["image_keys"])
        for kind, items, expected in (
            ("video", videos, row["video_budget_hash"]),
            ("image", images, row["image_budget_hash"]),
        ):
            for item in items:
                if item.budget_hash != expected:
                    raise StoreMismatchError(
                        f"{self.frames.root}: sample {row['task_id']}/{row['sample_id']} expects "
                        f"{kind} budget {expected} but row {item.cache_key} has "
                        f"{item.budget_hash}; {rebuild_hint(str(self.frames.root))}"
                    )
        return videos, images

    def __getitem__(self, index: int) -> dict[str, Any]:
        row = self.rows[index]
        videos, images = self._media(row)
        item: dict[str, Any] = {
            "task_id": row["task_id"],
            "sample_id": row["sample_id"],
            "problem_type": row["problem_type"],
            "prompt": row["prompt"],
            "answer": row["answer"],
            "options": row["options"],
            "messages": video_messages(
                row["prompt"], row["system_prompt"], len(videos), len(images)
            ),
            "videos": [v.frames for v in videos],
            "video_metadata": [v.video_metadata() for v in videos],
            "images": [i.frames[0] for i in images],
            "prompt_tokens_estimate": row["prompt_tokens_estimate"],
            "row": json.loads(row["row_json"]) if row["row_json"] else {},
        }
        if self.processor is not None:
            item["model_inputs"] = self._process(item, videos + images)
        return item

    def _process(self, item: dict[str, Any], media: list[CachedFrames]) -> dict[str, Any]:
        factor = processor_factor(self.processor)
        for cached in media:
            if factor is not None and cached.patch != factor:
                raise StoreMismatchError(
                    f"{self.frames.root}: {cached.source_uri} was resized for patch factor "
                    f"{cached.patch} but the processor expects {factor} "
                    f"({json.dumps(cached.budget, sort_keys=True)}); set budget patch: {factor} "
                    f"in the spec and {rebuild_hint(str(self.frames.root))}"
                )
        text = self.processor.apply_chat_template(
            item["messages"], add_generation_prompt=self.add_generation_prompt, tokenize=False
        )
        outputs = processor_outputs(
            self.processor, text, item["videos"], item["video_metadata"], item["images"]
        )
        return {
            key: (
                value[0] if key in ("input_ids", "attention_mask", "mm_token_type_ids") else value
            )
            for key, value in outputs.items()
        }
