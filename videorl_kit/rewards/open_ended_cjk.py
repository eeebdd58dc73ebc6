"""Short open-ended golds stated inside a short Chinese sentence.

Chinese is written without spaces, so the word rules of :mod:`videorl_kit.rewards.open_ended`
do not apply. A Chinese answer states a short gold (:func:`states_cjk_answer`) when:

* the gold is a **count** (``3``, ``three``, ``三``) and the answer is that one number, with a
  measure word and at most a short noun after it and a frame such as ``有``/``一共有``/``是``
  before it (``有三个人。``, ``3人``, ``一共有3只猫``); a second number, a negation or an
  alternative scores 0 (``三个或四个``, ``不是三个``);
* the gold is Chinese text (``厨房``, ``切菜``) and occurs **once** in a sentence of at most
  :data:`MAX_EXTRA_CHARS` other characters, with nothing before it but the start of the
  sentence or a character that cannot form a compound with it (``在``, ``是``, ``有``, ``的``:
  ``他在厨房里。``, ``她在切菜。``, ``红色的车``; never ``熊猫`` for ``猫`` nor ``玩具车`` for
  ``车``), and nothing after it but a place suffix (``里``, ``上``, ``中``) and a closing
  particle (``了``, ``的``, ``呢``); no negation (``不``, ``没``), alternative (``或``,
  ``还是``, ``可能``) or list mark (``、``, ``和``) anywhere outside the gold. A sentence that
  goes on after the gold (``他在厨房里做饭`` for ``厨房``) is not read: a known limit, as is
  every paraphrase. A gold of two or more characters may follow a place phrase opened by
  ``在`` (``他正在厨房里做饭。`` states ``做饭``), as an English action may precede its place.

Example:
    >>> states_cjk_answer("他在厨房里。", "厨房"), states_cjk_answer("熊猫", "猫")
    (True, False)
    >>> states_cjk_answer("有三个人。", "3"), states_cjk_answer("三个或四个", "3")
    (True, False)
"""

from __future__ import annotations

import re

from videorl_kit.rewards.numeric import chinese_number, number_words_as_digits

#: Other characters a sentence stating a Chinese gold may have.
MAX_EXTRA_CHARS = 10
_CJK_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_CN_NUMERAL_RE = re.compile(r"[零〇一二两三四五六七八九十百千万]{1,16}")
_PUNCT_RE = re.compile(r"[\s\W_]+")
_NEGATION = re.compile(r"不|没|沒|无|無|非|别|別|未|否")
_ALTERNATIVE = re.compile(r"或|还是|還是|可能|也许|也許|大概|大约|大約|吗|嗎|吧|左右|多|几|幾")
_LIST = re.compile(r"[、和与與及跟,;/&+]|以及")
#: Characters after which a gold is not part of a compound (particles, verbs of being, place
#: words): "在厨房", "是猫", "有车", "红色的车".
_BEFORE = frozenset(
    "在是有的着了到于於为為正就也都还還个個只隻条條位名张張把辆輛头頭匹本件座棵朵块塊台臺"
)
#: Last characters of a place phrase ("在厨房里"), after which a gold of two or more characters
#: is the action done there: "他正在厨房里做饭。" states "做饭".
_PLACE_END = frozenset("里裡上中内內")
_PLACE_SUFFIX = re.compile(
    r"(?:里面|裡面|里|裡|上面|上|之中|当中|當中|中|内|內)?(?:了|的|呢|啊|呀)?"
)
#: Frames before a count: "有三个", "一共有3只", "答案是5", "房间里有三个人".
_COUNT_FRAME = re.compile(
    r"(?:[\u3400-\u9fff]{0,6}?(?:一共|总共|總共|共)?(?:有|是|为|為)|一共|总共|總共|共)?"
)
_MEASURE = re.compile(
    r"(?:个|個|只|隻|条|條|位|名|张|張|把|辆|輛|头|頭|匹|本|件|座|棵|朵|块|塊|台|臺|次|岁|歲|人|片|支"
    r"|根|杯|瓶|双|雙|对|對|层|層|间|間|部|架|艘|盏|盞)?[\u3400-\u9fff]{0,3}"
)


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a CJK ideograph.

    Example:
        >>> has_cjk("厨房"), has_cjk("kitchen")
        (True, False)
    """
    return not text.isascii() and _CJK_RE.search(text) is not None


#: Words that hold a numeral character without counting anything ("一共" is "in total").
_NOT_COUNTS_RE = re.compile(
    r"一(?=共|起|直|些|下|样|樣|点|點|般|定|边|邊)|(?<=万|唯|统|統|第|之)一|第[二三四五六七八九十]"
)


def _compact(text: str) -> str:
    """``text`` without punctuation and spaces, Chinese numerals as digits."""
    text = _NOT_COUNTS_RE.sub("", text)
    text = _CN_NUMERAL_RE.sub(_numeral_digits, text)
    return _PUNCT_RE.sub("", text)


def _numeral_digits(m: re.Match[str]) -> str:
    value = chinese_number(m.group())
    return m.group() if value is None else str(value)


def states_cjk_answer(answer: str, gold: str) -> bool:
    """Whether the Chinese ``answer`` states the short ``gold`` (see the module docstring).

    Example:
        >>> states_cjk_answer("她在切菜。", "切菜"), states_cjk_answer("他不在厨房。", "厨房")
        (True, False)
    """
    if len(answer) > 4 * MAX_EXTRA_CHARS + 4 * len(gold) + 8:
        return False
    if not has_cjk(answer):
        return False
    gold_digits = _compact(number_words_as_digits(gold.strip().casefold()))
    text = _compact(answer)
    if gold_digits.isdigit():
        return _states_count(text, gold_digits)
    if not has_cjk(gold):
        return False
    target = _compact(gold)
    if not target or text.count(target) != 1:
        return False
    start = text.index(target)
    before, after = text[:start], text[start + len(target) :]
    if len(before) + len(after) > MAX_EXTRA_CHARS:
        return False
    rest = before + "|" + after
    if _NEGATION.search(rest) or _ALTERNATIVE.search(rest) or _LIST.search(rest):
        return False
    if before and before[-1] not in _BEFORE and not _after_place(before, target):
        return False  # "熊猫" is no cat, "玩具车" no car
    return _PLACE_SUFFIX.fullmatch(after) is not None


def _after_place(before: str, target: str) -> bool:
    """Whether ``before`` is a place phrase opened by 在 ("他正在厨房里") and ``target`` has at
    least two characters (a single one could form a compound with the place word)."""
    return len(target) >= 2 and before[-1] in _PLACE_END and "在" in before[:-1]


def _states_count(text: str, gold: str) -> bool:
    """Whether ``text`` (compacted) states the count ``gold`` alone: "有3个人", "3人"."""
    numbers = re.findall(r"\d+", text)
    if numbers != [gold]:
        return False
    start = text.index(gold)
    before, after = text[:start], text[start + len(gold) :]
    if _NEGATION.search(before + after) or _ALTERNATIVE.search(before + after):
        return False
    return _COUNT_FRAME.fullmatch(before) is not None and _MEASURE.fullmatch(after) is not None
