"""Which source frames to sample, and in what order to read them.

Frame selection follows qwen-vl-utils: ``n`` frames (:func:`~videorl_kit.media.geometry.
video_frame_count`) at the uniform positions of ``torch.linspace(0, N - 1, n).round()``.
Position ``p`` is turned into the time ``p / (N - 1)`` of the way from the first to the last
frame's timestamp, and picks the frame whose presentation timestamp is nearest (ties go to
the earlier frame). For constant-frame-rate video that is exactly frame ``p`` (the time is
``p / fps``); for variable frame rate, or AVI files whose timestamps skip dropped frames, it
is the frame on screen at that moment, where index arithmetic would drift.

The read plan decodes forward while that is cheaper than seeking, and seeks to the keyframe
before a target when many frames would otherwise be decoded for nothing.

Example:
    >>> from fractions import Fraction
    >>> times = [Fraction(i, 30) for i in range(150)]
    >>> select_frames(times, 4)
    [0, 50, 99, 149]
    >>> plan_reads([0, 50, 99, 149], keyframes=[0, 30, 60, 90, 120])
    [ReadSegment(seek_to=None, targets=[0]), ReadSegment(seek_to=30, targets=[50]), \
ReadSegment(seek_to=90, targets=[99]), ReadSegment(seek_to=120, targets=[149])]
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from videorl_kit.media.geometry import uniform_frame_indices

__all__ = ["SEEK_COST_FRAMES", "ReadSegment", "nearest_frames", "plan_reads", "select_frames"]

SEEK_COST_FRAMES = 8
"""A seek (demuxer reposition + decoder flush) is charged like decoding this many frames."""


def nearest_frames(times: Sequence[Fraction], targets: Sequence[Fraction]) -> list[int]:
    """Return, for each target time, the index of the frame with the nearest time.

    ``times`` must be sorted. Ties go to the earlier frame.

    Example:
        >>> from fractions import Fraction as F
        >>> nearest_frames([F(0), F(1, 10), F(5, 10)], [F(0), F(3, 10), F(4, 10)])
        [0, 1, 2]
    """
    chosen = []
    for target in targets:
        right = bisect.bisect_left(times, target)
        if right == 0:
            chosen.append(0)
        elif right == len(times):
            chosen.append(len(times) - 1)
        elif times[right] - target < target - times[right - 1]:
            chosen.append(right)
        else:
            chosen.append(right - 1)
    return chosen


def select_frames(times: Sequence[Fraction], n: int) -> list[int]:
    """Return the source frame indices to sample: ``n`` uniform positions, matched by time.

    ``times`` are the frames' presentation times (sorted). With fewer frames than ``n`` (a
    1-frame video padded to the temporal patch) indices repeat.

    Example:
        >>> from fractions import Fraction as F
        >>> select_frames([F(0)], 2)
        [0, 0]
        >>> vfr = [F(0), F(1, 2), F(1), F(11, 10), F(12, 10), F(13, 10)]  # 2 fps, then 10 fps
        >>> select_frames(vfr, 4)  # grid times 0, 0.52, 0.78, 1.3 s
        [0, 1, 2, 5]
    """
    positions = uniform_frame_indices(len(times), n)
    if len(times) == 1:
        return [0] * n
    start, span = times[0], times[-1] - times[0]
    targets = [start + span * position / (len(times) - 1) for position in positions]
    return nearest_frames(times, targets)


@dataclass
class ReadSegment:
    """Decode from ``seek_to`` (a keyframe position; ``None``: continue where the previous
    segment stopped, or from the start) until every position in ``targets`` is produced."""

    seek_to: int | None
    targets: list[int] = field(default_factory=list)


def plan_reads(
    wanted: Sequence[int], keyframes: Sequence[int], *, seek_cost: int = SEEK_COST_FRAMES
) -> list[ReadSegment]:
    """Group the wanted frame positions into decode segments.

    A segment starts with a seek when the target's keyframe lies beyond the last decoded
    frame and ``(target - keyframe) + seek_cost`` is less than decoding forward from there;
    dense targets therefore decode sequentially, sparse ones jump from keyframe to keyframe.

    Example:
        >>> plan_reads([0, 2, 4, 6], keyframes=[0, 250])
        [ReadSegment(seek_to=None, targets=[0, 2, 4, 6])]
        >>> plan_reads([0, 1000], keyframes=[0, 250, 500, 750, 1000])
        [ReadSegment(seek_to=None, targets=[0]), ReadSegment(seek_to=1000, targets=[1000])]
    """
    keyframes = sorted(keyframes)
    segments: list[ReadSegment] = []
    cursor = -1  # last decoded position; decoding from the start reaches position 0 first
    for target in sorted(set(wanted)):
        slot = bisect.bisect_right(keyframes, target) - 1
        keyframe = keyframes[slot] if slot >= 0 else None
        forward_cost = target - cursor
        if (
            keyframe is not None
            and keyframe > cursor
            and (target - keyframe) + seek_cost < forward_cost
        ):
            segments.append(ReadSegment(seek_to=keyframe, targets=[target]))
        elif segments:
            segments[-1].targets.append(target)
        else:
            segments.append(ReadSegment(seek_to=None, targets=[target]))
        cursor = target
    return segments
