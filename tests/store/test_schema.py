"""Cache key, budget hash, table schemas and the schema-version check."""

from __future__ import annotations

from pathlib import Path

import lance
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from videorl_kit.store.errors import StoreMismatchError, StoreNotFoundError
from videorl_kit.store.schema import (
    CACHE_SCHEMA_VERSION,
    CONFIG_SCHEMA_VERSION,
    FAILURES_SCHEMA,
    FRAMES_SCHEMA,
    SAMPLES_SCHEMA,
    TRAJECTORIES_SCHEMA,
    budget_hash,
    cache_key,
    canonical_json,
    failure_id,
)
from videorl_kit.store.tables import StoreTables

BASE = dict(
    content_hash="c" * 64,
    modality="video",
    budget={"fps": 2.0, "max_frames": 8, "min_pixels": 3136, "max_pixels": 12544, "patch": 28},
    decoder="pyav",
    decoder_version="18.1.0",
)


def test_cache_key_is_stable_and_order_independent() -> None:
    again = dict(BASE, budget=dict(reversed(list(BASE["budget"].items()))))
    assert cache_key(**BASE) == cache_key(**again)
    assert len(cache_key(**BASE)) == 64


@pytest.mark.parametrize(
    "change",
    [
        {"content_hash": "d" * 64},
        {"modality": "image"},
        {"budget": {**BASE["budget"], "fps": 1.0}},
        {"budget": {**BASE["budget"], "patch": 32}},
        {"budget": {**BASE["budget"], "total_pixels": 100000}},
        {"decoder": "torchcodec"},
        {"decoder_version": "18.2.0"},
    ],
)
def test_every_key_input_changes_the_key(change: dict) -> None:
    assert cache_key(**{**BASE, **change}) != cache_key(**BASE)


def test_schema_and_sampler_version_are_in_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    import videorl_kit.store.schema as schema

    before = cache_key(**BASE)
    monkeypatch.setattr(schema, "CACHE_SCHEMA_VERSION", CACHE_SCHEMA_VERSION + 1)
    assert cache_key(**BASE) != before
    monkeypatch.undo()
    monkeypatch.setattr(schema, "SAMPLER_VERSION", "other")
    assert cache_key(**BASE) != before


@given(
    st.dictionaries(
        st.text(max_size=5),
        st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    )
)
def test_canonical_json_ignores_insertion_order(data: dict) -> None:
    assert canonical_json(data) == canonical_json(dict(reversed(list(data.items()))))


def test_budget_hash_depends_on_modality_and_params() -> None:
    assert budget_hash("video", {"fps": 2.0}) != budget_hash("image", {"fps": 2.0})
    assert budget_hash("video", {"fps": 2.0}) != budget_hash("video", {"fps": 1.0})
    assert len(budget_hash("video", {})) == 16


def test_failure_id_unreadable_file_matches_empty_key() -> None:
    assert failure_id("/a.mp4", None) == failure_id("/a.mp4", "")
    assert failure_id("/a.mp4", None) != failure_id("/a.mp4", "k")
    assert failure_id("/a.mp4", "k") != failure_id("/b.mp4", "k")


def test_tables_hold_the_design_columns() -> None:
    frames = {
        "cache_key", "source_uri", "source_content_hash", "modality", "budget_json",
        "decoder", "decoder_version", "cache_schema_version", "frames", "frames_shape",
        "frames_codec", "frames_chunk_sizes", "frames_sha256",
        "frame_indices", "timestamps_s", "source_fps", "source_frames", "duration_s",
        "height", "width", "visual_tokens", "budget_hash",
    }  # fmt: skip
    failures = {"source_uri", "cache_key", "error_class", "message", "traceback", "decoder",
                "attempts", "last_failed_at"}  # fmt: skip
    samples = {"sample_id", "task_id", "spec_version", "question", "options", "answer",
               "video_keys", "image_keys", "prompt_tokens_estimate", "skip_reason"}  # fmt: skip
    trajectories = {"trajectory_id", "sample_id", "task_id", "response", "token_ids",
                    "tokenizer_id", "behaviour_logprobs", "reward_accuracy", "reward_format",
                    "reward_overall", "policy_id", "source", "created_at"}  # fmt: skip
    assert frames <= set(FRAMES_SCHEMA.names)
    assert failures <= set(FAILURES_SCHEMA.names)
    assert samples <= set(SAMPLES_SCHEMA.names)
    assert trajectories <= set(TRAJECTORIES_SCHEMA.names)
    assert FRAMES_SCHEMA.field("frames").type == pa.large_binary()


def test_create_store_makes_four_versioned_tables(tmp_path: Path) -> None:
    store = StoreTables.create(tmp_path / "s")
    for name in ("frames", "failures", "samples", "trajectories"):
        dataset = store.table(name)
        assert dataset.count_rows() == 0
        assert dataset.config()[CONFIG_SCHEMA_VERSION] == str(CACHE_SCHEMA_VERSION)
        assert store.schema_version(name) == CACHE_SCHEMA_VERSION
    assert store.table("frames").data_storage_version == "2.0"
    # opening again creates nothing new
    versions = {n: store.table(n).version for n in ("frames", "samples")}
    again = StoreTables.open(tmp_path / "s")
    assert {n: again.table(n).version for n in versions} == versions


def test_store_of_another_schema_version_is_refused(tmp_path: Path) -> None:
    store = StoreTables.create(tmp_path / "s")
    store.table("samples").update_config({CONFIG_SCHEMA_VERSION: "0"})
    with pytest.raises(StoreMismatchError) as err:
        StoreTables.open(tmp_path / "s")
    message = str(err.value)
    assert "cache schema version 0" in message
    assert f"reads version {CACHE_SCHEMA_VERSION}" in message
    assert "videorl-kit build-cache" in message


PROVENANCE_COLUMNS = (
    "spec_file", "spec_sha256", "spec_hub_files", "data_repo", "data_revision", "data_file",
    "data_sha256",
)  # fmt: skip


def write_version_1_store(root: Path) -> None:
    """A store as the first layout wrote it: version 1, samples without provenance columns."""
    schemas = {
        "frames": FRAMES_SCHEMA, "failures": FAILURES_SCHEMA, "trajectories": TRAJECTORIES_SCHEMA,
        "samples": pa.schema([f for f in SAMPLES_SCHEMA if f.name not in PROVENANCE_COLUMNS]),
    }  # fmt: skip
    for name, schema in schemas.items():
        schema = schema.with_metadata({CONFIG_SCHEMA_VERSION: "1"})
        empty = pa.Table.from_batches([], schema=schema)
        dataset = lance.write_dataset(empty, str(root / f"{name}.lance"), schema=schema)
        dataset.update_config({CONFIG_SCHEMA_VERSION: "1"})


def test_samples_record_provenance_since_version_2() -> None:
    assert CACHE_SCHEMA_VERSION >= 2
    assert set(PROVENANCE_COLUMNS) <= set(SAMPLES_SCHEMA.names)
    assert not SAMPLES_SCHEMA.field("spec_sha256").nullable


def test_a_version_1_store_is_refused_for_reading_and_building(
    tmp_path: Path, good_spec: Path
) -> None:
    from videorl_kit.store import FrameStore, build_cache

    write_version_1_store(tmp_path / "old")
    for attempt in (
        lambda: FrameStore.open(tmp_path / "old"),
        lambda: build_cache([good_spec], tmp_path / "old", workers=1),
    ):
        with pytest.raises(StoreMismatchError) as err:
            attempt()
        message = str(err.value)
        assert "written with cache schema version 1" in message
        assert f"this videorl-kit reads version {CACHE_SCHEMA_VERSION}" in message
        assert f"move {tmp_path / 'old'} away (or delete it) and rebuild" in message
    assert not (tmp_path / "old" / "frames.lance" / "data").exists()  # nothing was written


def test_missing_store_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreNotFoundError, match="not a videorl-kit store"):
        StoreTables.open(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(StoreNotFoundError, match=r"no frames\.lance"):
        StoreTables.open(tmp_path / "empty")


def test_budgets_are_recorded_once(tmp_path: Path) -> None:
    store = StoreTables.create(tmp_path / "s")
    digest = store.register_budget("video", {"fps": 2.0})
    version = store.table("frames").version
    assert store.register_budget("video", {"fps": 2.0}) == digest
    assert store.table("frames").version == version
    assert store.budgets() == {digest: {"modality": "video", "budget": {"fps": 2.0}}}
    assert isinstance(lance.dataset(store.uri("frames")).config(), dict)


def test_version_6_blocks_carry_checksums_and_rows_their_truncation_and_digest() -> None:
    assert CACHE_SCHEMA_VERSION == 6
    assert FRAMES_SCHEMA.field("row_digest").type == pa.string()
    assert not FRAMES_SCHEMA.field("row_digest").nullable
    assert not FRAMES_SCHEMA.field("frames_codec").nullable
    assert FRAMES_SCHEMA.field("frames_chunk_sizes").type == pa.list_(pa.int64())
    assert FRAMES_SCHEMA.field("frames_block_xxh3").type == pa.list_(pa.uint64())
    assert "frames_xxh3" not in FRAMES_SCHEMA.names  # one checksum per cell: schema 4
    assert FRAMES_SCHEMA.field("decode_warnings").type == pa.list_(pa.string())
    assert FRAMES_SCHEMA.field("truncation").type == pa.string()
    assert FRAMES_SCHEMA.field("truncation").nullable


def test_the_row_digest_covers_every_frames_column_but_the_bytes_and_build_statistics() -> None:
    """A column added to the frames table without adding it to the digest fails here."""
    from videorl_kit.store.row_digest import DIGEST_FIELDS

    covered = [name for name, _ in DIGEST_FIELDS]
    assert len(covered) == len(set(covered))
    left_out = set(FRAMES_SCHEMA.names) - set(covered)
    assert left_out == {"frames", "decode_seconds", "created_at", "row_digest"}
    assert set(covered) <= set(FRAMES_SCHEMA.names)
