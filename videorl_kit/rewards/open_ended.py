"""Open-ended answers: the ``rouge`` verifier.

* **Short ground truth** (at most ``short_max_words`` words, default 3): the answer (its final
  statement, if it has one: ``The answer is: kitchen``; clauses that only reject something
  dropped: ``the kitchen, not the bedroom``) is normalised (case-folded, punctuation and the
  articles a/an/the removed, whitespace collapsed, number words as digits: ``two`` = ``2``,
  ``three people`` = ``3 people``) and scores 1 when it equals the normalised gold, or when it
  is one short sentence that *states* the gold (:func:`states_short_answer`:
  ``It is Paris.``, ``The man is holding a red umbrella.``, ``It's a small brown dog.``,
  ``There are two people.``, ``She is cutting vegetables in the kitchen.``, ``There are five
  chairs around the table.``; not ``hot dog``, ``a cat toy``, ``It is not Paris``, ``Paris or
  London``, ``near Paris``, ``dog/cat``, ``cutting vegetables while peeling potatoes``, ``six
  chairs, five tables``). Otherwise 0.
* **Longer ground truth**: mean of ROUGE-1, ROUGE-2 and ROUGE-L F-measures, computed here
  with the tokenisation of ``rouge_score`` without stemming (lower-case ``[a-z0-9]+`` tokens), and
  tested equal to ``rouge_score.RougeScorer(use_stemmer=False)``. At most
  ``max_answer_tokens`` answer tokens (within the first :data:`MAX_ROUGE_CHARS` characters)
  are read: an answer that long has negligible precision anyway. An answer that copies the
  gold's words (ROUGE-1 at least :data:`NEGATION_OVERLAP`) but negates it, or drops its
  negation (``not``, ``never``, ``no``, ``n't``, ``without``, ...: one of the two has some and
  the other none), or swaps an action, direction or state for its opposite
  (:func:`~videorl_kit.rewards.contrasts.contrast`: ``The man closes the door`` for ``The man
  opens the door``), states the opposite event and scores 0.

An empty ground truth is unverifiable; an empty answer scores 0.

Example:
    >>> v = RougeVerifier(RougeParams())
    >>> v.score("Paris.", "paris").accuracy
    1.0
    >>> round(v.score("The cat leaps on the table", "A cat jumps onto the table.").accuracy, 3)
    0.4
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field

from videorl_kit.core.verifiers import register_verifier
from videorl_kit.rewards.base import VerifyOutcome
from videorl_kit.rewards.contrasts import contrast, offered_opposite
from videorl_kit.rewards.numeric import NUMBER_WORD_VALUES, number_words_as_digits
from videorl_kit.rewards.open_ended_cjk import has_cjk, states_cjk_answer
from videorl_kit.rewards.sequence import lcs_length
from videorl_kit.rewards.text import (
    NEGATION_WORDS,
    clean_gold,
    normalize_text,
    refine_answer,
    stated_answer,
)

#: Prepositions that only place a short gold (``in the kitchen``, ``on the table``, ``at the
#: door``): the place alone answers it. Not ``near``, ``under``, ``outside``, …, which say
#: where relative to the place (``kitchen`` is no answer to ``outside the kitchen``).
_PLAIN_PLACE_PREPOSITIONS = frozenset({"in", "on", "at", "inside"})

#: Words that offer alternatives in a long answer: both sides of a contrast joined by one are
#: a hedge (``opens or closes``, ``opens/closes``, ``either opens or closes``).
_ALTERNATIVE_RE = re.compile(r"\bor\b|\beither\b|[A-Za-z]/[A-Za-z]|或|还是", re.IGNORECASE)


def _word_set(words: str) -> frozenset[str]:
    """The words of ``words``, a space-separated list."""
    return frozenset(words.split())


_TOKEN_RE = re.compile(r"[a-z0-9]+")
_NON_TOKEN_RE = re.compile(r"[^a-z0-9]+")
#: Only the first this-many characters of an answer are tokenised.
MAX_ROUGE_CHARS = 200_000
#: ROUGE-1 F from which an answer with the opposite polarity of the gold scores 0.
NEGATION_OVERLAP = 0.5
#: Words besides the gold's that a sentence stating a short gold may have.
MAX_SENTENCE_EXTRA_WORDS = 8
_NEGATION_RE = re.compile(
    r"\b(?:not|no|never|nobody|nothing|none|neither|nor|cannot|without)\b|n['’]t\b"
    # a negating verb or adverb: "fails to cut", "refuses to cut", "is hardly cutting"
    r"|\b(?:fails?|failed|failing|refuses?|refused|refusing|unable)\s{1,3}to\b"
    r"|\b(?:hardly|barely|scarcely)\b"
    # the statement declared false after it: "... in the kitchen — false.", "... Falsch."
    r"|(?:[.!?;:—–]|\s-)\s{0,3}(?:false|wrong|untrue|incorrect|falsch|faux|falso)\s{0,3}[.!]{0,3}\s{0,3}$"
)
#: Negations and alternatives, as normalised tokens: a sentence with one states no plain answer.
_NOT_A_STATEMENT = NEGATION_WORDS | frozenset(
    ["or", "either", "maybe", "perhaps", "possibly", "might", "unsure"]
)
_LIST_WORDS = frozenset(["and", "or", "nor", "plus"])
#: A bound on a count ("at least 3 people", "3+ people"): no count, as in ``numeric``.
_BOUND_RE = re.compile(
    r"\b(?:at\s{1,3}(?:least|most)|more\s{1,3}than|fewer\s{1,3}than|less\s{1,3}than|up\s{1,3}to"
    r"|no\s{1,3}(?:more|fewer|less)\s{1,3}than|over|under|above|below|upwards\s{1,3}of"
    r"|a\s{1,3}(?:minimum|maximum)\s{1,3}of)\s{1,3}\d|\d\s{0,2}\+|\d\s{1,3}or\s{1,3}(?:more|fewer|less)\b",
    re.IGNORECASE,
)
#: Words that place the answer relative to the gold instead of stating it ("near Paris").
_RELATIONAL_WORDS = _word_set(
    "near behind beside beneath below above outside around except besides unlike than "
    "like opposite next close far past beyond toward towards"
)
_SENTENCE_BREAK_RE = re.compile(r"[.!?。！？]\s+\S")
#: Compounds that name something other than their last word: English compounds are
#: right-headed (a "police car" is a car), except these ("a hot dog" is no dog).
_OTHER_THINGS = frozenset(
    re.findall(
        r"\w+ \w+",
        "hot dog, corn dog, prairie dog, sea lion, sea horse, sea cow, sea star, sea urchin, "
        "sea cucumber, sea dragon, mountain lion, ant lion, teddy bear, gummy bear, koala bear, "
        "guinea pig, hedge hog, snow man, gingerbread man, straw man, spider man, iron man, "
        "cat fish, jelly fish, star fish, cray fish, silver fish, dragon fly, butter fly, "
        "fire fly, lady bug, rocking horse, hobby horse, saw horse, pan cake, fish cake, "
        "crab cake, egg plant, paper tiger, bull frog, horse fly",
    )
)
#: Modifiers that make a likeness of the thing, not the thing ("a toy car", "a stuffed dog").
_LIKENESS = _word_set(
    "toy fake model stuffed plush cartoon inflatable robot robotic statue replica "
    "artificial imitation"
)
#: "looks like a dog" states "dog" ("like" alone places it relative: "a city like Paris").
_LOOKS = frozenset(["looks", "look", "looked", "seems", "seem", "seemed", "sounds"])
#: Words that may follow the gold at the end of the sentence ("He is walking now", "in the
#: kitchen upstairs").
_TRAILING_WORDS = _word_set(
    "too also now here there today tonight again already indeed alone together inside "
    "outside upstairs downstairs"
)
#: Prepositions that open a phrase saying where, when, how or with what an action or a count
#: holds ("cutting vegetables in the kitchen", "five chairs around the table").
_ADJUNCT_PREPOSITIONS = _word_set(
    "in on at by with into onto inside outside under underneath beneath below above over "
    "behind beside near around across along through toward towards from for during next to "
    "up down past among between against within"
)
#: The prepositions that may follow a *thing* the gold names: those that, before a gold, stop
#: it being stated ("a dog near the tree" states "dog", never "tree"). After "in" or "with"
#: both nouns would pass ("Paris in London"), a hedge between two things of one kind.
_PLACING_PREPOSITIONS = _ADJUNCT_PREPOSITIONS & _RELATIONAL_WORDS
#: Words of a phrase after the gold that join a second answer to it ("... and six stools",
#: "... then peeling potatoes").
_JOINING_WORDS = _LIST_WORDS | frozenset(
    ["then", "while", "before", "after", "until", "also", "as", "but"]
)
#: Most words of the phrase after the gold, its preposition included ("in the small kitchen").
MAX_ADJUNCT_WORDS = 4
#: A count followed by these states a difference, not the count ("five more chairs").
_COMPARATIVES = frozenset(["more", "fewer", "less", "extra", "additional", "other"])
_COPULAS = frozenset(["is", "are", "was", "were"])
#: ``-ing`` words that are no second action beside an action gold: places, times and things
#: ("in the morning", "by the swimming pool", "in the dining room").
_ING_NOT_ACTIONS = _word_set(
    "morning evening building ceiling wedding meeting living dining parking swimming "
    "waiting shopping thing something anything everything during spring string"
)
#: Marks that join items of a list ("dog/cat", "dog; cat", "dog & cat", "dog - cat").
_LIST_MARKS_RE = re.compile(r"[;/&+|]|\s[-–—]\s")


def has_negation(text: str) -> bool:
    """Whether ``text`` negates something (``not``, ``no``, ``never``, ``n't``, ``without``...).

    Example:
        >>> has_negation("The dog doesn't bark"), has_negation("The dog barks")
        (True, False)
    """
    return _NEGATION_RE.search(text[:MAX_ROUGE_CHARS].lower()) is not None


def _with_digits(norm: str) -> str:
    """Normalised text with single number words as digits (``three people`` -> ``3 people``)."""
    return " ".join(str(NUMBER_WORD_VALUES.get(t, t)) for t in norm.split())


def _is_action(word: str) -> bool:
    """Whether ``word`` is an ``-ing`` form (``cutting``; also nouns such as ``building``)."""
    return len(word) > 4 and word.endswith("ing")


def _is_count(gold: list[str]) -> bool:
    """Whether the normalised ``gold`` holds a number (``5``, ``3 people``)."""
    return any(w.isdigit() for w in gold)


def _adjunct_phrase(words: list[str], gold: list[str]) -> bool:
    """Whether ``words`` (what follows a stated gold) is one phrase that only places it: a
    preposition (:data:`_ADJUNCT_PREPOSITIONS` after an action or a count, only the placing
    ones of :data:`_PLACING_PREPOSITIONS` after a thing) and at most
    :data:`MAX_ADJUNCT_WORDS` words in all, joining no second answer (:data:`_JOINING_WORDS`),
    with no number after a count ("around six tables").
    """
    count = _is_count(gold)
    prepositions = _ADJUNCT_PREPOSITIONS if count or _is_action(gold[0]) else _PLACING_PREPOSITIONS
    if not words or len(words) > MAX_ADJUNCT_WORDS or words[0] not in prepositions:
        return False
    return not any(word in _JOINING_WORDS or (count and word.isdigit()) for word in words[1:])


def _count_noun(word: str, gold: list[str], after_comma: bool) -> bool:
    """After a count, its noun ("two people"), not a comparison ("two more") nor a
    preposition ("five in the morning ...": a phrase, never the noun)."""
    return (
        gold[-1].isdigit()
        and word not in _COMPARATIVES
        and word not in _ADJUNCT_PREPOSITIONS
        and word not in _JOINING_WORDS
    )


def _copula(word: str, gold: list[str], after_comma: bool) -> bool:
    """A form of "be" after the gold, its subject ("two cats are sleeping")."""
    return word in _COPULAS


def _modifier(word: str, gold: list[str], after_comma: bool) -> bool:
    """An adverb ("walking slowly"), a participle ("a dog barking"), a word of
    :data:`_TRAILING_WORDS` ("now", "upstairs"), or a name right after a comma, the place
    around the gold ("Paris, France"; "dog, cat" is a list)."""
    return (
        word.endswith("ly")
        or (len(word) > 4 and word.endswith(("ing", "ed")))
        or word in _TRAILING_WORDS
        or after_comma
    )


#: What may follow a stated gold, each at most once and in this order, before a phrase that
#: places it: ``five | chairs | are | standing | around the table``.
_FOLLOWERS = (_count_noun, _copula, _modifier)


def _follows_statement(words: list[str], gold: list[str], after_comma: bool, slot: int = 0) -> bool:
    """Whether ``words``, what follows the gold (``after_comma``: a name after a comma), leave
    it the thing named: words of :data:`_FOLLOWERS` (each slot used at most once, in order),
    then at most one :func:`_adjunct_phrase`. Never another noun ("a cat toy", "dog food": the
    gold would only describe it).
    """
    if not words or _adjunct_phrase(words, gold):
        return True
    return any(
        follower(words[0], gold, after_comma) and _follows_statement(words[1:], gold, False, i + 1)
        for i, follower in enumerate(_FOLLOWERS[slot:], start=slot)
    )


def _comma_parts(sentence: str) -> dict[int, bool]:
    """The normalised words of ``sentence`` that start a part after a comma: their index, and
    whether the part starts with a capital letter (a name: "Paris, France")."""
    starts, at = {}, 0
    for number, part in enumerate(sentence.split(",")):
        size = len(_with_digits(normalize_text(part, drop_articles=True)).split())
        if number and size:
            starts[at] = part.lstrip()[:1].isupper()
        at += size
    return starts


def states_short_answer(sentence: str, words: list[str], gold: list[str]) -> bool:
    """Whether one short sentence (normalised ``words``) states the short ``gold`` (see the
    module docstring): the gold's words occur once, with at most
    :data:`MAX_SENTENCE_EXTRA_WORDS` other words, no negation, alternative or list (``dog/cat``,
    ``dog; cat``; nor right after a comma: ``dog, cat`` states no cat), no second count beside
    a count gold (``6 5``, ``six chairs, five tables``), no second action beside an action gold
    (an ``-ing`` word not in :data:`_ING_NOT_ACTIONS`: ``cutting vegetables, peeling
    potatoes``, ``by peeling potatoes``), and no word placing the answer relative to the gold
    (``near Paris``, ``next to the kitchen``).
    The gold is the thing named: words before it may describe it (``a small brown dog``, ``a
    police car``), except those that name another thing with it (:data:`_OTHER_THINGS`: ``a
    hot dog``) or a likeness of it (:data:`_LIKENESS`: ``a toy car``). What follows it must
    leave it the thing named (:func:`_follows_statement`: ``walking slowly``, ``two people``,
    ``cutting vegetables in the kitchen``, ``five chairs around the table``, ``a dog near the
    tree``), never another noun (``a cat toy``, ``dog food``: the gold would only describe
    it).

    Example:
        >>> states_short_answer("It is Paris.", ["it", "is", "paris"], ["paris"])
        True
        >>> states_short_answer("It is not Paris.", ["it", "is", "not", "paris"], ["paris"])
        False
        >>> states_short_answer("It's a sea lion.", ["its", "sea", "lion"], ["lion"])
        False
        >>> words = ["she", "is", "cutting", "vegetables", "in", "kitchen"]
        >>> states_short_answer("She is cutting vegetables in the kitchen.", words, words[2:4])
        True
    """
    n = len(gold)
    if not n or len(words) > n + MAX_SENTENCE_EXTRA_WORDS:
        return False
    if _SENTENCE_BREAK_RE.search(sentence.strip()) or _LIST_MARKS_RE.search(sentence):
        return False
    if any(w in _NOT_A_STATEMENT for w in words if w not in gold):
        return False
    spans = [i for i in range(len(words) - n + 1) if words[i : i + n] == gold]
    if len(spans) != 1:  # absent, or repeated ("kitchen kitchen kitchen")
        return False
    start = spans[0]
    after = words[start + n :]
    others = words[:start] + after
    if _is_count(gold) and any(w.isdigit() for w in others):
        return False  # a second count: "6 5", "six chairs, five tables"
    if _is_action(gold[0]) and any(_is_action(w) and w not in _ING_NOT_ACTIONS for w in others):
        return False  # a second action: "cutting vegetables while peeling potatoes"
    comma_parts = _comma_parts(sentence) if "," in sentence else {}
    if start in comma_parts:
        return False  # an item of a list: "dog, cat", "cat, dog, bird"
    if not _follows_statement(after, gold, comma_parts.get(start + n, False)):
        return False  # "a cat toy", "dog, cat"; but "Paris, France" names the place around it
    prev, prev2 = words[start - 1] if start else "", words[start - 2] if start > 1 else ""
    if f"{prev} {gold[0]}" in _OTHER_THINGS or prev in _LIKENESS or prev2 in _LIKENESS:
        return False  # "a hot dog", "a toy car", "a stuffed brown dog"
    if prev == "like" and prev2 in _LOOKS:
        return True  # "it looks like a dog"
    if prev in _LIST_WORDS:
        return False  # "London and Paris"
    # "near Paris", "next to the red car"
    return not any(w in _RELATIONAL_WORDS for w in words[max(0, start - 3) : start])


def rouge_tokens(text: str, limit: int | None = None) -> list[str]:
    """Tokens as ``rouge_score`` makes them without a stemmer (lower-case ``[a-z0-9]+``).

    Example:
        >>> rouge_tokens("It's 3 o'clock, Café!")
        ['it', 's', '3', 'o', 'clock', 'caf']
    """
    text = text[:MAX_ROUGE_CHARS].lower()
    parts = _NON_TOKEN_RE.split(text, maxsplit=0 if limit is None else limit + 1)
    if limit is not None and len(parts) > limit + 1:
        parts = parts[: limit + 1]  # the last part is the unsplit remainder
    tokens = [p for p in parts if p]
    return tokens if limit is None else tokens[:limit]


def _f_measure(overlap: int, n_pred: int, n_ref: int) -> float:
    precision = overlap / max(n_pred, 1)
    recall = overlap / max(n_ref, 1)
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def _ngram_f(pred: Sequence[str], ref: Sequence[str], n: int) -> float:
    pred_ngrams = Counter(tuple(pred[i : i + n]) for i in range(len(pred) - n + 1))
    ref_ngrams = Counter(tuple(ref[i : i + n]) for i in range(len(ref) - n + 1))
    overlap = sum((pred_ngrams & ref_ngrams).values())
    return _f_measure(overlap, sum(pred_ngrams.values()), sum(ref_ngrams.values()))


def rouge_f_measures(pred: Sequence[str], ref: Sequence[str]) -> tuple[float, float, float]:
    """ROUGE-1, ROUGE-2 and ROUGE-L F-measures of token lists (``rouge_score`` semantics).

    Example:
        >>> rouge_f_measures(["a", "b"], ["a", "b"])
        (1.0, 1.0, 1.0)
    """
    r1 = _ngram_f(pred, ref, 1)
    r2 = _ngram_f(pred, ref, 2)
    if not pred or not ref:
        rl = 0.0
    else:
        lcs = lcs_length(pred, ref)
        rl = _f_measure(lcs, len(pred), len(ref))
    return r1, r2, rl


@lru_cache(maxsize=8192)
def _gold_forms(gold: str) -> tuple[str, tuple[str, ...], int, bool, str]:
    text = clean_gold(gold)
    norm = _with_digits(normalize_text(number_words_as_digits(text), drop_articles=True))
    return norm, tuple(rouge_tokens(text)), len(text.split()), has_negation(text), text


def states_count_alone(sentence: str, words: list[str], gold: list[str]) -> bool:
    """Whether an answer gives only the number of a count gold with its noun (``three`` or
    ``There are 3.`` for ``3 people``): the gold's number is the answer's one number and its
    last word, and the sentence states it (:func:`states_short_answer`). A number with another
    noun (``3 dogs``) is no answer to ``3 people``.

    Example:
        >>> states_count_alone("three", ["3"], ["3", "people"])
        True
        >>> states_count_alone("3 dogs", ["3", "dogs"], ["3", "people"])
        False
    """
    if len(gold) < 2 or not gold[0].isdigit() or any(w.isdigit() for w in gold[1:]):
        return False
    if not words or words[-1] != gold[0] or sum(w.isdigit() for w in words) != 1:
        return False
    return states_short_answer(sentence, words, gold[:1])


class RougeParams(BaseModel):
    """Parameters of the ``rouge`` verifier."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: Ground truths with at most this many words are graded by exact match (1/0).
    short_max_words: int = Field(default=3, ge=0)
    #: Answer tokens read for ROUGE (the rest is ignored).
    max_answer_tokens: int = Field(default=4096, ge=1)


@register_verifier(name="rouge", version=2, problem_types=("open_ended",), params_model=RougeParams)
class RougeVerifier:
    """Exact match for short answers, else mean ROUGE-1/2/L F-measure (no stemming)."""

    def __init__(self, params: RougeParams) -> None:
        self.params = params

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        """Grade free text: exact match for short golds, ROUGE otherwise."""
        gold_norm, gold_tokens, gold_words, gold_negated, gold_text = _gold_forms(gold)
        if not gold_norm and not gold_tokens:
            return VerifyOutcome.unverifiable("empty ground truth")
        if gold_words <= self.params.short_max_words:
            if len(answer_text) > 20 * (len(gold_norm) + 20):
                return VerifyOutcome.wrong("answer much longer than the short ground truth")
            sentence = refine_answer(answer_text)
            if not gold_negated:  # a negative gold ("not blue") keeps its negations
                sentence = stated_answer(answer_text, sentence)
            sentence = number_words_as_digits(sentence)  # "twenty-one people" is "21 people"
            if _is_count(gold_norm.split()) and _BOUND_RE.search(sentence):
                return VerifyOutcome.wrong("a bound on a count commits to no count")
            pred_norm = _with_digits(normalize_text(sentence, drop_articles=True))
            if pred_norm == gold_norm:
                return VerifyOutcome.ok(1.0, mode="exact", pred=pred_norm[:200], gold=gold_norm)
            words, gold_list = pred_norm.split(), gold_norm.split()
            if (  # "kitchen" for "in the kitchen" (round 4)
                len(gold_list) > 1
                and gold_list[0] in _PLAIN_PLACE_PREPOSITIONS
                and words == gold_list[1:]
            ):
                return VerifyOutcome.ok(
                    1.0, mode="place_alone", pred=pred_norm[:200], gold=gold_norm
                )
            stated = (
                states_short_answer(sentence, words, gold_list)
                or states_count_alone(sentence, words, gold_list)
                or (has_cjk(sentence) and states_cjk_answer(sentence, gold_text))
            )
            return VerifyOutcome.ok(
                1.0 if stated else 0.0,
                mode="in_sentence" if stated else "exact",
                pred=pred_norm[:200],
                gold=gold_norm,
            )
        pred_tokens = rouge_tokens(answer_text, limit=self.params.max_answer_tokens)
        r1, r2, rl = rouge_f_measures(pred_tokens, gold_tokens)
        scores = {"mode": "rouge", "rouge1": r1, "rouge2": r2, "rougeL": rl}
        if r1 >= NEGATION_OVERLAP:  # a near-copy of the gold: does it state the opposite?
            if has_negation(answer_text) != gold_negated:
                reason = "the answer negates the ground truth (or drops its negation)"
                return VerifyOutcome.ok(0.0, reason=reason, **scores)
            if _ALTERNATIVE_RE.search(answer_text):  # "opens or closes", "opens/closes"
                both = offered_opposite(pred_tokens, list(gold_tokens))
                if both is not None:
                    reason = f"the answer offers {both[0]!r} beside {both[1]!r} (hedge)"
                    return VerifyOutcome.ok(0.0, reason=reason, **scores)
            swap = contrast(pred_tokens, list(gold_tokens))
            if swap is not None:
                reason = f"the answer says {swap[0]!r} where the ground truth says {swap[1]!r}"
                return VerifyOutcome.ok(0.0, reason=reason, **scores)
        return VerifyOutcome.ok((r1 + r2 + rl) / 3, **scores)
