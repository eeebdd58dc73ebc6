"""Frame cells: LZ4 per frame where it saves bytes, raw elsewhere, always bit-identical."""

from __future__ import annotations

import shutil
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from videorl_kit.store import FrameStore, StoreIntegrityError, frame_codec
from videorl_kit.store.frame_codec import (
    CODEC_LZ4,
    CODEC_NONE,
    PARALLEL_MIN_BYTES,
    BlockChecksumError,
    FrameCodecError,
    block_checksums,
    block_sizes,
    decode_frames,
    decode_frames_from,
    encode_frames,
)
from videorl_kit.store.row_digest import row_digest
from videorl_kit.store.schema import FRAMES_SCHEMA
from videorl_kit.store.verify import verify_store


def _round_trip(frames: np.ndarray) -> tuple[str, np.ndarray, int]:
    encoded = encode_frames(frames)
    payload = np.frombuffer(encoded.payload, dtype=np.uint8)
    back = decode_frames(payload, frames.shape, encoded.codec, encoded.chunk_sizes)
    return encoded.codec, back, len(encoded.payload)


def _smooth(t: int, h: int, w: int) -> np.ndarray:
    y, x = np.mgrid[0:h, 0:w]
    frames = np.stack([(x + y + 3 * i) % 256 for i in range(t)]).astype(np.uint8)
    return np.repeat(frames[..., None], 3, axis=-1)


def _noise(t: int, h: int, w: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (t, h, w, 3), dtype=np.uint8)


@given(
    hnp.arrays(
        np.uint8,
        st.tuples(st.integers(1, 4), st.integers(1, 12), st.integers(1, 12), st.just(3)),
        elements=st.integers(0, 3) | st.integers(0, 255),
    )
)
def test_any_frames_round_trip_bit_identical(frames: np.ndarray) -> None:
    _, back, _ = _round_trip(frames)
    assert back.dtype == np.uint8 and back.shape == frames.shape
    np.testing.assert_array_equal(back, frames)


def test_compressible_frames_are_stored_smaller() -> None:
    frames = _smooth(4, 96, 128)
    codec, back, size = _round_trip(frames)
    assert codec == CODEC_LZ4 and size < 0.9 * frames.nbytes
    np.testing.assert_array_equal(back, frames)


def test_incompressible_frames_are_stored_raw_without_a_copy() -> None:
    frames = _noise(3, 40, 50)
    encoded = encode_frames(frames)
    assert encoded.codec == CODEC_NONE and encoded.chunk_sizes == []
    assert encoded.payload == frames.tobytes()
    payload = np.frombuffer(encoded.payload, dtype=np.uint8)
    back = decode_frames(payload, frames.shape, encoded.codec, encoded.chunk_sizes)
    assert np.shares_memory(back, payload)


def test_mixed_cell_keeps_noise_frames_raw_and_decodes_in_parallel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(frame_codec, "PARALLEL_MIN_CORES", 1)  # threads even on 2 cores
    h, w = 300, 400  # 4 frames x 360 kB: above the parallel threshold
    frames = np.concatenate([_smooth(2, h, w), _noise(2, h, w)])
    assert frames.nbytes >= PARALLEL_MIN_BYTES
    encoded = encode_frames(frames)
    frame_bytes = h * w * 3
    assert encoded.codec == CODEC_LZ4
    assert [s < frame_bytes for s in encoded.chunk_sizes] == [True, True, False, False]
    _, back, _ = _round_trip(frames)
    np.testing.assert_array_equal(back, frames)


def test_damaged_cells_raise_codec_errors() -> None:
    frames = _smooth(2, 32, 32)
    encoded = encode_frames(frames)
    payload = np.frombuffer(encoded.payload, dtype=np.uint8)
    with pytest.raises(FrameCodecError, match="blocks"):
        decode_frames(payload[:-1], frames.shape, encoded.codec, encoded.chunk_sizes)
    garbage = np.full(payload.size, 0xF0, dtype=np.uint8)
    with pytest.raises(FrameCodecError, match="frame 0"):
        decode_frames(garbage, frames.shape, encoded.codec, encoded.chunk_sizes)
    with pytest.raises(FrameCodecError, match="unknown frames codec"):
        decode_frames(payload, frames.shape, "brotli", encoded.chunk_sizes)
    with pytest.raises(FrameCodecError, match="needs"):
        decode_frames(payload, frames.shape, CODEC_NONE, [])


def test_store_rows_decode_to_their_hash_and_damage_is_reported(
    built_store: Path, tmp_path: Path
) -> None:
    store = FrameStore.open(built_store)
    codecs = store.metadata().column("frames_codec").to_pylist()
    assert set(codecs) <= {CODEC_NONE, CODEC_LZ4}
    # a cell whose bytes no longer decompress is reported as damage, not garbage frames
    copy = tmp_path / "store"
    shutil.copytree(built_store, copy)
    dataset = lance.dataset(str(copy / "frames.lance"))
    row = dataset.to_table(limit=1).to_pylist()[0]
    shape = row["frames_shape"]
    frame_bytes = shape[1] * shape[2] * shape[3]
    row.update(
        frames=b"\xf0" * (shape[0] * 10),
        frames_codec=CODEC_LZ4,
        frames_chunk_sizes=[10] * shape[0],
        frames_block_xxh3=block_checksums(
            b"\xf0" * (shape[0] * 10), [10] * shape[0]
        ),  # bad content
    )
    row["row_digest"] = row_digest(row)  # consistent metadata: the bytes are what is wrong
    assert frame_bytes != 10
    table = pa.Table.from_pylist([row], schema=FRAMES_SCHEMA)
    dataset.merge_insert("cache_key").when_matched_update_all().execute(table)
    with pytest.raises(StoreIntegrityError, match="damaged"):
        FrameStore.open(copy).get(row["cache_key"])
    report = verify_store(copy, sample=None, keys=[row["cache_key"]])
    assert [c.status for c in report.checked] == ["corrupt"]
    assert "does not decompress" in report.checked[0].detail
    assert report.checked[0].source_uri == row["source_uri"]


# -- the block path (reads block by block, on threads) is the plain path ----------------------


def _reader_of(payload: np.ndarray):
    def read(offset: int, out: np.ndarray) -> None:
        out[:] = payload[offset : offset + out.size]

    return read


def _both_paths(payload, shape, encoded, checksums, *, threaded: bool):
    """(plain result or error, block result or error), the block path threaded or not."""
    results = []
    with pytest.MonkeyPatch.context() as patch:
        if threaded:  # every cell takes the threaded branch, however small
            patch.setattr(frame_codec, "PARALLEL_MIN_BYTES", 0)
            patch.setattr(frame_codec, "PARALLEL_MIN_CORES", 1)  # threads even on 2 cores
        for decode in (
            lambda: decode_frames(payload, shape, encoded.codec, encoded.chunk_sizes, checksums),
            lambda: decode_frames_from(
                _reader_of(payload), payload.size, shape, encoded.codec, encoded.chunk_sizes,
                checksums,
            ),
        ):  # fmt: skip
            try:
                results.append(decode().copy())
            except FrameCodecError as exc:
                results.append(exc)
    return results


def _same(a: object, b: object) -> None:
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), b
        np.testing.assert_array_equal(a, b)
    else:  # the same error, naming the same frame
        assert type(a) is type(b) and str(a) == str(b), (a, b)


@given(
    frames=hnp.arrays(
        np.uint8,
        st.tuples(st.integers(1, 6), st.integers(1, 24), st.integers(1, 24), st.just(3)),
        elements=st.integers(0, 2) | st.integers(0, 255),
    ),
    damage=st.none() | st.tuples(st.floats(0, 1, exclude_max=True), st.integers(1, 255)),
    verify=st.booleans(),
    threaded=st.booleans(),
)
def test_the_block_path_is_the_plain_path(
    frames: np.ndarray, damage: tuple[float, int] | None, verify: bool, threaded: bool
) -> None:
    """Same frames from intact cells; from a cell with one byte changed, the same error (a
    checksum naming the same frame, or the same decompression failure) or the same frames."""
    encoded = encode_frames(frames)
    payload = np.frombuffer(encoded.payload, dtype=np.uint8).copy()
    assert len(encoded.checksums) == len(block_sizes(frames.shape, encoded.codec,
                                                     encoded.chunk_sizes))  # fmt: skip
    if damage is not None:
        where, xor = damage
        payload[int(where * payload.size)] ^= xor
    checksums = encoded.checksums if verify else None
    plain, block = _both_paths(payload, frames.shape, encoded, checksums, threaded=threaded)
    _same(plain, block)
    if damage is None:
        np.testing.assert_array_equal(plain, frames)
    elif verify:
        assert isinstance(plain, BlockChecksumError)


def test_the_threaded_block_path_on_a_large_mixed_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frame_codec, "PARALLEL_MIN_CORES", 1)  # threads even on 2 cores
    h, w = 300, 400  # 8 frames x 360 kB: the threaded branch without lowering the size
    frames = np.concatenate([_smooth(4, h, w), _noise(4, h, w)])[[0, 4, 1, 5, 2, 6, 3, 7]]
    encoded = encode_frames(frames)
    payload = np.frombuffer(encoded.payload, dtype=np.uint8)
    assert frames.nbytes >= PARALLEL_MIN_BYTES and encoded.codec == CODEC_LZ4
    back = decode_frames_from(
        _reader_of(payload), payload.size, frames.shape, encoded.codec, encoded.chunk_sizes,
        encoded.checksums,
    )  # fmt: skip
    np.testing.assert_array_equal(back, frames)
    for frame in (0, 7):  # a compressed and a raw frame, damaged
        damaged = payload.copy()
        damaged[sum(encoded.chunk_sizes[:frame]) + 5] ^= 1
        with pytest.raises(BlockChecksumError, match=f"frame {frame}'s stored bytes"):
            decode_frames_from(
                _reader_of(damaged), damaged.size, frames.shape, encoded.codec,
                encoded.chunk_sizes, encoded.checksums,
            )  # fmt: skip
