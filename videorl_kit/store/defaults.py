"""Defaults of the cache build that the CLI needs without importing Lance or the decoders.

Example:
    >>> DEFAULT_ITEM_TIMEOUT_S
    300.0
"""

from __future__ import annotations

from typing import Final

DEFAULT_ITEM_TIMEOUT_S: Final[float] = 300.0
"""Wall-clock limit for decoding one media item (``build-cache --item-timeout``)."""

DEFAULT_BATCH_ITEMS: Final[int] = 16
"""Items per commit of a build (``build-cache --batch-items``): a crash loses at most one batch."""

DEFAULT_BATCH_BYTES: Final[int] = 256 * 1024 * 1024
"""Bytes of frames that make a batch due for its commit."""

DEFAULT_BATCH_SECONDS: Final[float] = 30.0
"""Seconds after which a non-empty batch is committed."""

DEFAULT_MP_CONTEXT: Final[str] = "forkserver"
"""Start method of the local decode workers (never ``fork``: decoders and Lance use threads)."""

EXIT_BUILD_FAILED: Final[int] = 3
"""Exit status of ``build-cache`` when the build ran but no input ended ok (or, with
``--fail-on-error``, any input failed); 1 is a user error, 2 a command-line usage error."""
