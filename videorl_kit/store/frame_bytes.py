"""Reading the bytes of the blob-encoded ``frames`` column, fast, through a pinned layout.

The frames column is a Lance *blob* column: each cell's bytes lie contiguously in the
fragment's data file, and a scan of the column returns only ``{position, size}``
descriptors. :class:`FrameBytesReader` reads a cell with ``preadv`` on the data file named
by the fragment's manifest entry (:meth:`~FrameBytesReader.frames`: block by block, each
block read by the thread that checks and decodes it), and falls back to Lance's public
``LanceDataset.read_blobs`` whenever that is not possible (a remote URI, a data file outside
the dataset folder). Data files are immutable in Lance, so a reader pinned at one version
keeps reading the same bytes (unless ``cleanup_old_versions`` deletes that version's files).

**A data file cut short or deleted under an open reader** is refused, never read past its
end: every read is a ``preadv`` (nothing is memory-mapped, so no read can end in ``SIGBUS``),
and a cell whose byte range the file no longer holds raises :class:`MissingBytesError`
naming the file and the range, which the store's reader turns into one line with the repair
command.

**Why not only Lance's public API (decided by measurement).** Read cell by cell, as
``FrameStore.get`` does, Lance's readers are several times slower than one ``preadv``:
on 1.2 MB cells (pylance 14.0.2, a loaded 2-core machine, page cache warm) ``read_blobs``
read 0.51 GB/s and ``take_blobs`` + ``readinto`` 0.28-0.39 GB/s, against 1.70 GB/s for
``preadv`` and 2.98 GB/s for ``np.fromfile`` of the same bytes from plain files. The
cache's read target, (b) in ``benchmarks/bench_cache.py`` (cached read >= 0.5 of a raw
read), would fall from about 0.57 to at most 0.17; the benchmark prints (b) through
Lance's reader beside it.

**The layout this relies on**, beyond Lance's public API: (1) a scan of a blob column
gives each cell's byte range in the data file that holds the column in the row's fragment
(Lance's blob encoding in the 2.0 data storage format, which the frames table uses); (2)
that data file is ``<dataset folder>/data/<DataFile.path>`` when its ``base_id`` is None;
(3) a row address's upper 32 bits are its fragment id. ``tests/store/
test_frame_bytes_layout.py`` checks each against the installed pylance and fails naming
the version and what changed; the reader uses the direct path only under the pylance
major version that test last passed with (:data:`LAYOUT_VERIFIED_FOR`), and Lance's reader
otherwise (slower, same bytes), with a warning.

Example:
    >>> import tempfile, lance, pyarrow as pa
    >>> schema = pa.schema([pa.field("b", pa.large_binary(),
    ...                              metadata={"lance-encoding:blob": "true"})])
    >>> uri = tempfile.mkdtemp() + "/t.lance"
    >>> ds = lance.write_dataset(pa.table({"b": [b"abc", b"defg"]}, schema=schema), uri,
    ...                          data_storage_version="2.0")
    >>> locations = blob_locations(ds, "b")
    >>> [bytes(a) for a in FrameBytesReader(ds, "b").read(locations)]
    [b'abc', b'defg']
"""

from __future__ import annotations

import errno
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlparse

import lance
import numpy as np

from videorl_kit.core.errors import VideoRLKitError
from videorl_kit.store.frame_codec import decode_frames, decode_frames_from

BLOB_METADATA = {"lance-encoding:blob": "true"}

LAYOUT_VERIFIED_FOR = "14."
"""The pylance version prefix whose file layout ``tests/store/test_frame_bytes_layout.py``
verified; direct reads are off under any other version."""


def layout_verified(version: str | None = None) -> bool:
    """True when the direct read's layout was verified for pylance ``version`` (default: the
    installed one).

    Example:
        >>> layout_verified("14.0.2"), layout_verified("15.0.0")
        (True, False)
    """
    return (version or lance.__version__).startswith(LAYOUT_VERIFIED_FOR)


@dataclass(frozen=True)
class BlobLocation:
    """Where one cell's bytes are: a local data file (or None) and a byte range."""

    path: str | None
    position: int
    size: int
    row_address: int


def is_blob_column(dataset: lance.LanceDataset, column: str) -> bool:
    """True when ``column`` is stored with Lance's blob encoding."""
    metadata = dataset.schema.field(column).metadata or {}
    return metadata.get(b"lance-encoding:blob") == b"true"


def _local_root(dataset: lance.LanceDataset) -> str | None:
    uri = dataset.uri
    parsed = urlparse(uri)
    if parsed.scheme not in ("", "file"):
        return None
    return parsed.path if parsed.scheme == "file" else uri


def _data_files(dataset: lance.LanceDataset, column: str) -> dict[int, str | None]:
    """Fragment id -> local path of the data file holding ``column`` (None: use Lance)."""
    root = _local_root(dataset)
    field_id = dataset.lance_schema.field(column).id()
    files: dict[int, str | None] = {}
    for fragment in dataset.get_fragments():
        path = None
        for data_file in fragment.data_files():
            if field_id in data_file.fields:
                if root is not None and data_file.base_id is None:
                    path = os.path.join(root, "data", data_file.path)
                break
        files[fragment.fragment_id] = path
    return files


def blob_locations(
    dataset: lance.LanceDataset, column: str, descriptors: list[dict] | None = None,
    row_addresses: list[int] | None = None,
) -> list[BlobLocation]:  # fmt: skip
    """The location of every cell of blob column ``column``, in scan order.

    Pass ``descriptors`` and ``row_addresses`` from a scan made with
    ``with_row_address=True`` to avoid a second scan.
    """
    if descriptors is None or row_addresses is None:
        table = dataset.to_table(columns=[column], with_row_address=True)
        descriptors = table.column(column).to_pylist()
        row_addresses = table.column("_rowaddr").to_pylist()
    files = _data_files(dataset, column)
    return [
        BlobLocation(files.get(address >> 32), int(d["position"]), int(d["size"]), address)
        for d, address in zip(descriptors, row_addresses, strict=True)
    ]


class MissingBytesError(VideoRLKitError, OSError):
    """A data file no longer holds a cell's byte range: cut short or deleted after the reader
    opened the store (the open-time check, :mod:`videorl_kit.store.integrity`, saw it whole)."""


def _range_gone(fd: int | None, path: str, start: int, end: int) -> MissingBytesError:
    if fd is None:
        return MissingBytesError(
            f"its data file {path} is gone (deleted since the store was opened)"
        )
    size = os.fstat(fd).st_size
    return MissingBytesError(
        f"its data file {path} holds {size} bytes but the cell is bytes {start}-{end} (the file "
        "was cut short after the store was opened)"
    )


def pread_exact(fd: int, path: str, offset: int, out: np.ndarray) -> None:
    """Fill ``out`` (1-D uint8) with the bytes of open file ``fd`` from ``offset`` on.

    Raises :class:`MissingBytesError` when the file ends first.

    Example:
        >>> import tempfile
        >>> path = tempfile.mkdtemp() + "/data.lance"
        >>> with open(path, "wb") as f:
        ...     _ = f.write(b"abcdef")
        >>> fd = os.open(path, os.O_RDONLY)
        >>> out = np.empty(3, np.uint8)
        >>> pread_exact(fd, path, 2, out); bytes(out)
        b'cde'
        >>> pread_exact(fd, "data.lance", 4, out)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        videorl_kit.store.frame_bytes.MissingBytesError: its data file data.lance holds 6 bytes ...
        >>> os.close(fd)
    """
    done = 0
    while done < out.size:  # preadv may return short counts on large ranges
        n = os.preadv(fd, [memoryview(out)[done:]], offset + done)
        if n <= 0:
            raise _range_gone(fd, path, offset, offset + out.size)
        done += n


class FrameBytesReader:
    """Reads blob cells by direct ``preadv`` (default) or through Lance's blob reader."""

    def __init__(self, dataset: lance.LanceDataset, column: str, *, direct: bool = True):
        self.dataset = dataset
        self.column = column
        if direct and not layout_verified():
            warnings.warn(
                f"pylance {lance.__version__}: the direct frames read was verified for pylance "
                f"{LAYOUT_VERIFIED_FOR}x; reading through Lance's blob reader (same bytes, "
                "slower) until tests/store/test_frame_bytes_layout.py passes with this version",
                RuntimeWarning,
                stacklevel=2,
            )
            direct = False
        self.direct = direct
        self.n_fallbacks = 0

    def _open(self, location: BlobLocation) -> int | None:
        """A descriptor of the cell's data file, or None when direct reads are off or
        impossible; :class:`MissingBytesError` when the file is gone or too short."""
        if not self.direct or location.path is None:
            return None
        try:  # O_NOFOLLOW: a data file swapped for a link since the open-time check
            fd = os.open(location.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            raise _range_gone(None, location.path, 0, 0) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise MissingBytesError(
                    f"its data file {location.path} was replaced by a symbolic link after the "
                    "store was opened"
                ) from None
            return None
        end = location.position + location.size
        if location.position < 0 or os.fstat(fd).st_size < end:
            error = _range_gone(fd, location.path, location.position, end)
            os.close(fd)
            raise error
        return fd

    def _read_direct(self, location: BlobLocation) -> np.ndarray | None:
        fd = self._open(location)
        if fd is None:
            return None
        buffer = np.empty(location.size, dtype=np.uint8)
        try:
            pread_exact(fd, location.path or "", location.position, buffer)
        finally:
            os.close(fd)
        return buffer

    def read(self, locations: list[BlobLocation]) -> list[np.ndarray]:
        """The bytes of each location as a 1-D uint8 array, in the order given.

        :class:`MissingBytesError` when a data file no longer holds a cell.
        """
        out: list[np.ndarray | None] = [self._read_direct(loc) for loc in locations]
        missing = [i for i, array in enumerate(out) if array is None]
        if missing:
            self.n_fallbacks += len(missing)
            try:
                blobs = self.dataset.read_blobs(
                    self.column, addresses=[locations[i].row_address for i in missing]
                )
            except (OSError, ValueError) as exc:  # a data file cut short or gone
                detail = (str(exc).splitlines() or [type(exc).__name__])[0]
                raise MissingBytesError(f"Lance cannot read its data file ({detail})") from None
            payload = {address: data for address, data in blobs}
            for i in missing:
                data = payload.get(locations[i].row_address)
                if data is None:
                    raise OSError(f"{self.dataset.uri}: frames cell {i} could not be read")
                out[i] = np.frombuffer(data, dtype=np.uint8)
        return [array for array in out if array is not None]

    def frames(
        self,
        location: BlobLocation,
        shape: Sequence[int],
        codec: str,
        chunk_sizes: Sequence[int],
        checksums: Sequence[int] | None,
    ) -> np.ndarray:
        """The decoded frames of the cell at ``location`` (see
        :mod:`videorl_kit.store.frame_codec`), each block checked against ``checksums``
        unless that is None.

        Direct reads go block by block (:func:`~videorl_kit.store.frame_codec.decode_frames_from`);
        otherwise the cell comes whole from Lance and is decoded by
        :func:`~videorl_kit.store.frame_codec.decode_frames`. Raises
        :class:`MissingBytesError` or :class:`~videorl_kit.store.frame_codec.FrameCodecError`.
        """
        fd = self._open(location)
        if fd is None:
            payload = self.read([location])[0]
            return decode_frames(payload, shape, codec, chunk_sizes, checksums)
        path = location.path or ""

        def read(offset: int, out: np.ndarray) -> None:
            pread_exact(fd, path, location.position + offset, out)

        try:
            return decode_frames_from(read, location.size, shape, codec, chunk_sizes, checksums)
        finally:
            os.close(fd)
