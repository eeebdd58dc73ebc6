"""The base of the kit's configuration models: unknown keys are errors, values are frozen.

Example:
    >>> class Point(StrictModel):
    ...     x: int = 0
    >>> Point(x=1).x
    1
    >>> Point(y=1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for Point
    y
      Extra inputs are not permitted ...
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """A pydantic model that rejects unknown keys and cannot be changed once built."""

    model_config = ConfigDict(extra="forbid", frozen=True)
