"""Defaults of the cache build that the CLI needs without importing Lance or the decoders.

Example:
    >>> DEFAULT_ITEM_TIMEOUT_S
    300.0
"""

from __future__ import annotations

from typing import Final

DEFAULT_ITEM_TIMEOUT_S: Final[float] = 300.0
"""Wall-clock limit for decoding one media item (``build-cache --item-timeout``)."""

DEFAULT_MP_CONTEXT: Final[str] = "forkserver"
"""Start method of the local decode workers (never ``fork``: decoders and Lance use threads)."""

EXIT_BUILD_FAILED: Final[int] = 3
"""Exit status of ``build-cache`` when the build ran but no input ended ok (or, with
``--fail-on-error``, any input failed); 1 is a user error, 2 a command-line usage error."""
