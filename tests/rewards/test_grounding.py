"""Grounding verifiers: temporal, box, spatio-temporal, tracking."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from videorl_kit.core.verifiers import NoParams
from videorl_kit.rewards.grounding import (
    BoxIouVerifier,
    GroundingError,
    SpatioTemporalIouVerifier,
    TemporalIouVerifier,
    TrackingIouVerifier,
    _gold_track,
    _iou_by_gold_keys,
    _iou_over_gold,
    box_iou,
    interval_iou,
    parse_boxes_by_second,
    parse_interval_answer,
    parse_time,
    to_box,
    to_interval,
)

TEMPORAL = TemporalIouVerifier(NoParams())
BOX = BoxIouVerifier(NoParams())
ST = SpatioTemporalIouVerifier(NoParams())
TRACK = TrackingIouVerifier(NoParams())
GOLD_T = '{"time": [15, 25]}'


@pytest.mark.parametrize(
    "answer",
    [
        '{"time": [10, 20]}',
        '{"time": ["0:10", "0:20"]}',
        "[10, 20]",
        "from 10 to 20 seconds.",
        "10-20s",
        "10 - 20 seconds",
        "between 0:10 and 0:20",
        "00:00:10 - 00:00:20",
        "The event happens in 10–20 s",
        "so the answer is 10 to 20 s",
        '```json\n{"time": [10, 20]}\n```',
        'Here it is: {"time": [10, 20]}',
        "从第10秒到第20秒",
    ],
)
def test_temporal_forms_read_the_same_interval(answer: str) -> None:
    outcome = TEMPORAL.score(answer, GOLD_T)
    assert outcome.accuracy == pytest.approx(1 / 3), outcome.details


def test_words_containing_to_do_not_split_a_range() -> None:
    assert parse_interval_answer("the tomato rolls from 10 to 20 s") == (10.0, 20.0)


def test_reversed_interval_is_rejected_with_a_reason() -> None:
    outcome = TEMPORAL.score('{"time": [20, 10]}', GOLD_T)
    assert outcome.accuracy == 0.0 and "reversed" in outcome.details["reason"]


def test_zero_length_prediction_scores_zero() -> None:
    assert TEMPORAL.score("[20, 20]", GOLD_T).accuracy == 0.0


def test_zero_length_or_reversed_gold_is_unverifiable() -> None:
    assert TEMPORAL.score("[5, 5]", '{"time": [5, 5]}').status == "unverifiable"
    assert TEMPORAL.score("[5, 6]", '{"time": [9, 5]}').status == "unverifiable"


def test_two_different_intervals_are_a_hedge() -> None:
    outcome = TEMPORAL.score("from 1 to 2 s or from 10 to 20 s", GOLD_T)
    assert outcome.accuracy == 0.0 and "hedge" in outcome.details["reason"]


def test_charades_style_gold_inside_think_is_read() -> None:
    # Peer V scores this 0: its gold must be pure JSON.
    gold = '<think>{"time": [10, 20]}</think><[PLHD12]>'
    assert TEMPORAL.score("[10, 20]", gold).accuracy == 1.0


def test_negative_and_invalid_times() -> None:
    with pytest.raises(GroundingError):
        parse_time(-1)
    with pytest.raises(GroundingError):
        parse_time("1:75")
    assert parse_time("01:02:03") == 3723.0


def test_interval_iou_values() -> None:
    assert interval_iou((10, 20), (15, 25)) == pytest.approx(1 / 3)
    assert interval_iou((0, 10), (10, 20)) == 0.0
    assert interval_iou((3, 3), (3, 3)) == 1.0


@pytest.mark.parametrize(
    "answer",
    [
        '{"boxes": [0, 0, 10, 10]}',
        '{"bbox_2d": [0, 0, 10, 10]}',
        '[{"bbox_2d": [0, 0, 10, 10], "label": "cup"}]',
        "[0, 0, 10, 10]",
        "[[0, 0, 10, 10]]",
        "The object is at [0, 0, 10, 10].",
        "(0, 0, 10, 10)",
        '{"boxes": "0, 0, 10, 10"}',
    ],
)
def test_box_forms(answer: str) -> None:
    assert BOX.score(answer, '{"boxes": [0, 0, 10, 10]}').accuracy == 1.0


def test_box_iou_value_and_reversed_box() -> None:
    assert BOX.score("[0, 0, 10, 10]", '{"boxes": [5, 5, 15, 15]}').accuracy == pytest.approx(
        25 / 175
    )
    assert BOX.score("[10, 10, 0, 0]", '{"boxes": [0, 0, 10, 10]}').accuracy == 0.0
    assert BOX.score("[0,0,1,1]", '{"boxes": [0, 0, 0, 10]}').status == "unverifiable"
    assert box_iou((0, 0, 10, 10), (10, 0, 20, 10)) == 0.0


def _track(time: list[float] | None, boxes: dict[str, list[float]]) -> str:
    data: dict = {"boxes": boxes}
    if time is not None:
        data["time"] = time
    return json.dumps(data)


SQUARE = [0, 0, 10, 10]
GOLD_ST = _track([1, 3], {"1": SQUARE, "2": SQUARE, "3": SQUARE})


def test_spatiotemporal_counts_missing_seconds_as_zero() -> None:
    # Peer: mean over the intersection, so one correct second gives full box credit.
    one = ST.score(_track([1, 3], {"1": SQUARE}), GOLD_ST)
    assert one.accuracy == pytest.approx(0.5 + 0.5 / 3)
    assert ST.score(GOLD_ST, GOLD_ST).accuracy == 1.0


def test_spatiotemporal_keys_9_and_9_0_are_the_same_second() -> None:
    assert (
        ST.score(_track([1, 3], {"1.0": SQUARE, "2": SQUARE, "3.00": SQUARE}), GOLD_ST).accuracy
        == 1.0
    )


def test_conflicting_boxes_for_one_second_score_zero_on_it() -> None:
    pred = '{"time": [1, 3], "boxes": {"1": [0,0,10,10], "1.0": [5,5,9,9], "2": [0,0,10,10], "3": [0,0,10,10]}}'
    assert ST.score(pred, GOLD_ST).accuracy == pytest.approx(0.5 + 0.5 * 2 / 3)


def test_extra_predicted_seconds_count_zero_in_the_union() -> None:
    # vIoU (HC-STVG / VidSTG): the box half is the IoU summed over the gold seconds divided by
    # the union of gold and predicted seconds; a box where the gold has none counts 0.
    pred = _track([1, 3], {"1": SQUARE, "2": SQUARE, "3": SQUARE, "4": SQUARE, "5": [0, 0, 1, 1]})
    outcome = ST.score(pred, GOLD_ST)
    assert outcome.accuracy == pytest.approx(0.5 + 0.5 * 3 / 5)
    assert outcome.details["extra_seconds"] == 2


def test_a_finer_grained_right_answer_is_not_punished() -> None:
    keys = {f"{s / 2:g}": SQUARE for s in range(2, 7)}  # 1, 1.5, 2, 2.5, 3
    assert ST.score(_track([1, 3], keys), GOLD_ST).accuracy == 1.0
    quarter = {f"{s / 4:g}": SQUARE for s in range(4, 13)}  # every 0.25 s over [1, 3]
    assert ST.score(_track([1, 3], quarter), GOLD_ST).accuracy == 1.0


def test_keys_moved_off_the_grid_still_count_as_extra_seconds() -> None:
    base = {"1": SQUARE, "2": SQUARE, "3": SQUARE}
    on_grid = ST.score(_track([1, 3], {**base, "5": SQUARE, "6": SQUARE}), GOLD_ST).accuracy
    off_grid = ST.score(_track([1, 3], {**base, "5.3": SQUARE, "6.4": SQUARE}), GOLD_ST)
    assert off_grid.accuracy == on_grid == pytest.approx(0.5 + 0.5 * 3 / 5)
    # many keys in one cell claim one second; half a step past the last gold second is a cell
    crowded = {**base, "7.6": SQUARE, "7.9": SQUARE, "8.2": SQUARE, "3.6": SQUARE}
    assert ST.score(_track([1, 3], crowded), GOLD_ST).details["extra_seconds"] == 2


def test_a_box_every_second_of_the_video_keeps_almost_no_box_credit() -> None:
    keys = {str(s): SQUARE for s in range(100)}
    outcome = ST.score(_track([0, 100], keys), GOLD_ST)
    assert outcome.accuracy == pytest.approx(0.5 * 2 / 100 + 0.5 * 3 / 100)


@settings(max_examples=100)
@given(st.sets(st.sampled_from(["0", "1", "1.5", "2", "2.5", "3", "4", "4.4", "9"])))
def test_omitting_a_gold_second_never_raises_the_score(keys: set[str]) -> None:
    pred = {k: SQUARE for k in keys}
    full = ST.score(_track([1, 3], pred), GOLD_ST).accuracy
    for gold_key in ("1", "2", "3"):
        fewer = {k: v for k, v in pred.items() if k != gold_key}
        assert ST.score(_track([1, 3], fewer), GOLD_ST).accuracy <= full
        worse = {**pred, gold_key: [50, 50, 60, 60]} if gold_key in pred else pred
        assert ST.score(_track([1, 3], worse), GOLD_ST).accuracy <= full


def test_extra_seconds_on_an_irregular_gold_grid() -> None:
    from videorl_kit.rewards.grounding import extra_seconds

    grid = (0.0, 0.5, 2.0)  # step 0.5
    assert extra_seconds([0.2, 0.7, 1.8, 2.25], grid, 0.5) == 0
    assert extra_seconds([1.0, 1.1, 3.0], grid, 0.5) == 2  # the cells of 1.0 and 3.0
    assert extra_seconds([1.0, 1.1, 1.25, 3.0], grid, 0.5) == 3  # and 1.5


def test_spatiotemporal_bad_time_keeps_the_box_part() -> None:
    outcome = ST.score(_track([3, 1], {"1": SQUARE, "2": SQUARE, "3": SQUARE}), GOLD_ST)
    assert outcome.accuracy == 0.5 and "reversed" in outcome.details["time_reason"]


def test_tracking_mean_over_gold_seconds() -> None:
    gold = _track(None, {"1": SQUARE, "2": SQUARE})
    pred = _track(None, {"1": SQUARE, "2": [5, 5, 15, 15]})
    assert TRACK.score(pred, gold).accuracy == pytest.approx((1 + 25 / 175) / 2)
    assert TRACK.score(_track(None, {"1": SQUARE}), gold).accuracy == 0.5


def test_tracking_gold_without_boxes_is_unverifiable() -> None:
    assert TRACK.score("{}", '{"boxes": {}}').status == "unverifiable"
    assert TRACK.score("{}", '{"boxes": {"x": [0, 0, 1, 1]}}').status == "unverifiable"


def test_tracking_answer_must_be_an_object() -> None:
    assert TRACK.score("[1, 2, 3]", _track(None, {"1": SQUARE})).accuracy == 0.0


_BOX = st.lists(st.integers(-5, 40), min_size=4, max_size=4)
_KEYS = st.sampled_from(["1", "2", "3", "1.0", "2.5", "0:03", "x"])


@settings(max_examples=150)
@given(
    st.dictionaries(st.sampled_from(["1", "2", "3"]), _BOX, min_size=1),
    st.dictionaries(_KEYS, st.one_of(_BOX, st.just([1.5, 0, 3, 3]), st.just("0,0,1,1"))),
)
def test_tracking_by_gold_keys_agrees_with_the_general_path(gold: dict, pred: dict) -> None:
    """The bulk path (predicted keys that are the gold's own) scores as the per-second path."""
    gold = {k: [x, y, x + 1 + abs(w), y + 1 + abs(h)] for k, (x, y, w, h) in gold.items()}
    gold_text = json.dumps({"boxes": gold})
    parsed = _gold_track(gold_text, False)
    assert not isinstance(parsed, str)
    fast = _iou_by_gold_keys(pred, parsed)
    general = _iou_over_gold(
        parse_boxes_by_second(pred, strict=False, wanted=parsed.seconds), parsed.boxes
    )
    if fast is not None:
        assert fast[1] == general[1]
        assert fast[0] == pytest.approx(general[0], abs=1e-12)
    assert TRACK.score(json.dumps({"boxes": pred}), gold_text).accuracy == pytest.approx(
        general[0], abs=1e-12
    )


_JSON_NUMBER = st.one_of(st.integers(-(10**12), 10**12), st.floats(allow_nan=True))


def _outcome(read, value):
    try:
        return read(value)
    except GroundingError:
        return "refused"


@given(st.lists(_JSON_NUMBER, min_size=2, max_size=2))
def test_interval_fast_path_reads_what_the_general_path_reads(value: list) -> None:
    """Two JSON numbers in a list take the fast path; the same in a tuple, the general one."""
    assert _outcome(to_interval, value) == _outcome(to_interval, tuple(value))


@given(st.lists(_JSON_NUMBER, min_size=4, max_size=4))
def test_box_fast_path_reads_what_the_general_path_reads(value: list) -> None:
    """Four JSON numbers in a list take the fast path; the same in a tuple, the general one."""
    assert _outcome(to_box, value) == _outcome(to_box, tuple(value))


def test_numbers_at_the_edge_of_the_float_range() -> None:
    """Finite coordinates whose sum overflows are read like any others (the fast path's
    finiteness test adds them up); an integer beyond the float range is no number: the answer
    scores 0 with a reason, never a verifier error."""
    edge = [0, 0, 8.988465674311579e307, 8.98846567431158e307]
    assert to_box(edge) == to_box(tuple(edge)) == tuple(float(v) for v in edge)
    for huge in ([0, 0, 10**400, 1.5], (0, 0, 10**400, 1.5)):
        with pytest.raises(GroundingError, match="not a number"):
            to_box(huge)
    result = BOX.score("[0, 0, 1" + "0" * 400 + ", 1.5]", '{"boxes": [0, 0, 10, 10]}')
    assert (result.status, result.accuracy) == ("ok", 0.0), result.details
