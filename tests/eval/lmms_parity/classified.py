"""Every disagreement between the kit and lmms-eval 0.7.3 on the parity cases, classified.

A row names an answer form (:mod:`tests.eval.lmms_parity.cases`), the benchmarks on which the
two scorers disagree on it, the class of the disagreement and why. The parity test requires
each disagreement it finds to be listed here and each row to still disagree (a row whose
disagreement is gone must be removed), except rows marked ``pending``: a kit error already
being fixed on another branch, which may or may not have landed. The class ``kit wrong`` must
never appear outside ``pending``; docs/eval.md holds :func:`markdown_table` verbatim.
"""

from __future__ import annotations

from dataclasses import dataclass

STRICTER = "kit stricter on purpose"
MISREADS = "lmms-eval misreads"
GUESSES = "lmms-eval guesses"
JUDGE = "lmms-eval asks a judge"
LEAVES_OUT = "lmms-eval leaves it out"
KIT_WRONG = "kit wrong"
CLASSES = (STRICTER, MISREADS, GUESSES, JUDGE, LEAVES_OUT, KIT_WRONG)


@dataclass(frozen=True)
class Row:
    """One classified disagreement: an answer form on some benchmarks."""

    form: str
    specs: tuple[str, ...]
    kind: str
    why: str
    pending: str | None = None


ALL_CHOICE = (
    "video-mme",
    "mvbench",
    "lvbench",
    "longvideobench",
    "mlvu",
    "video-holmes",
    "minerva",
    "mmvu-mc",
    "video-mmmu",
    "videomathqa",
    "vsi-bench",
    "motionbench",
    "ovo-bench",
)

ROWS: tuple[Row, ...] = (
    Row(
        "hedge-two",
        (
            "video-mme",
            "mvbench",
            "lvbench",
            "longvideobench",
            "mlvu",
            "mmvu-mc",
            "video-mmmu",
            "videomathqa",
            "vsi-bench",
            "motionbench",
            "ovo-bench",
        ),
        STRICTER,
        "'B or C' names two options; the kit scores a hedge 0, lmms-eval's extractors take the "
        "first letter (or, MMVU and OVO-Bench, any gold letter present)",
    ),
    Row(
        "all-letters",
        (
            "video-mme",
            "mvbench",
            "longvideobench",
            "mlvu",
            "video-holmes",
            "minerva",
            "mmvu-mc",
            "video-mmmu",
            "ovo-bench",
        ),
        STRICTER,
        "'A, B, C, D' lists every option; lmms-eval credits it whenever the letter it happens to "
        "take is the gold one",
    ),
    Row(
        "number-hedge",
        ("video-mmmu", "vsi-bench"),
        STRICTER,
        "'4 or 8' gives two numbers; lmms-eval takes the first (VSI-Bench's extract_number) or "
        "any matching one (Video-MMMU's parse_open_response + eval_open)",
    ),
    Row(
        "span-reversed",
        ("charades-sta",),
        STRICTER,
        "'7.5 - 1' ends before it starts; the kit's temporal verifier scores a reversed "
        "interval 0 (videorl_kit/rewards/grounding.py), lmms-eval's extract_time reorders it",
    ),
    Row(
        "letter-lower",
        ("video-mme", "lvbench", "mlvu", "video-mmmu", "videomathqa", "ovo-bench"),
        MISREADS,
        "a lower-case letter alone ('b') is not read: the extractors match capital letters "
        "only (mcq_extract, MMMU's parser, OVO-Bench's 'gt in response')",
    ),
    Row(
        "letter-lower",
        ("longvideobench", "video-holmes", "minerva"),
        GUESSES,
        "a lower-case letter alone is not read, so lmms-eval picks a random letter "
        "(random.choice, seeded by --seed)",
    ),
    Row(
        "option-text",
        (
            "video-mme",
            "mvbench",
            "lvbench",
            "mlvu",
            "minerva",
            "video-holmes",
            "video-mmmu",
            "videomathqa",
            "vsi-bench",
            "motionbench",
            "ovo-bench",
        ),
        MISREADS,
        "the gold option's text alone ('Moving right') is not mapped to its option (or a letter "
        "inside it is taken); the kit credits an answer that names an option by its text",
    ),
    Row(
        "option-text",
        ("longvideobench", "minerva", "video-holmes"),
        GUESSES,
        "the gold option's text alone finds no letter, so lmms-eval picks a random letter",
    ),
    Row(
        "letter-and-text",
        ("minerva", "video-holmes"),
        MISREADS,
        "'C. A timer': the article 'A' of the option text is read as the answer",
    ),
    Row(
        "sentence-article",
        (
            "video-mme",
            "mvbench",
            "lvbench",
            "longvideobench",
            "mlvu",
            "video-mmmu",
            "videomathqa",
            "motionbench",
        ),
        MISREADS,
        "'A person appears ..., so the correct option is (C).': the article 'A' opening the "
        "sentence is read as the answer (or, MVBench, the first standalone letter)",
    ),
    Row(
        "answer-then-other-option",
        ("video-mme", "lvbench", "mlvu", "video-holmes", "video-mmmu", "vsi-bench"),
        MISREADS,
        "'The answer is B. Option C is incorrect.': the later letter wins in mcq_extract and "
        "MMMU's parser; VSI-Bench reads only the first word",
    ),
    Row(
        "answer-colon",
        ("longvideobench", "videomathqa", "vsi-bench"),
        MISREADS,
        "'Answer: C': the 'A' of 'Answer' is the first capital A-E left after the prefixes are "
        "stripped (LongVideoBench, VideoMathQA, whose prefix list misses 'Answer:'); VSI-Bench "
        "reads only the first word",
    ),
    Row(
        "best-option-prefill",
        ("videomathqa", "vsi-bench"),
        MISREADS,
        "'Best option: (C)': VideoMathQA's prefix list fuses 'Best answer:' and 'Best option:' "
        "into one string (a missing comma), so the 'B' of 'Best' is read; VSI-Bench reads only "
        "the first word",
    ),
    Row(
        "answer-is",
        ("vsi-bench",),
        MISREADS,
        "'The answer is A.': VSI-Bench's fuzzy_matching compares only the first word",
    ),
    Row(
        "final-answer-is",
        ("vsi-bench",),
        MISREADS,
        "'... Therefore, the final answer is: A': VSI-Bench compares only the first word",
    ),
    Row(
        "letter-parens",
        ("vsi-bench",),
        MISREADS,
        "'(A)': VSI-Bench's fuzzy_matching compares '(A)' with 'A'",
    ),
    Row(
        "think-answer-tags",
        ("vsi-bench",),
        MISREADS,
        "'<answer>A</answer>' after the reasoning is stripped: VSI-Bench compares the whole "
        "first word",
    ),
    Row(
        "think-answer-tags",
        ("video-holmes",),
        GUESSES,
        "'<answer>F</answer>' matches none of Video-Holmes' letter forms ('(F)', 'F ', 'F.'), so "
        "lmms-eval picks a random letter",
    ),
    Row(
        "no-answer",
        ("motionbench",),
        MISREADS,
        "'I cannot determine the answer': upper-cased, the 'C' of 'CANNOT' is read as option C",
    ),
    Row(
        "no-answer",
        ("longvideobench", "video-holmes", "minerva"),
        GUESSES,
        "no option named, so lmms-eval picks a random letter; the kit scores 0",
    ),
    Row(
        "empty",
        ("longvideobench", "video-holmes", "minerva"),
        GUESSES,
        "an empty answer gets a random letter in lmms-eval; the kit scores 0",
    ),
    Row(
        "empty",
        ("mvbench",),
        LEAVES_OUT,
        "an empty answer leaves MVBench's denominator in lmms-eval "
        "(mvbench_aggregate_results); the kit counts it as a wrong answer",
    ),
    Row(
        "number-decimal",
        ("ovo-bench",),
        MISREADS,
        "'1.0' for a count of 1: OVO-Bench's REC joins every digit ('10')",
    ),
    Row(
        "number-word",
        ("ovo-bench",),
        MISREADS,
        "'one' for a count of 1: OVO-Bench's REC reads digits only",
    ),
    Row(
        "span-json-tags",
        ("charades-sta",),
        MISREADS,
        "'<answer>{\"time\": [1, 7.5]}</answer>' (the kit's reasoning-protocol answer form): "
        "extract_time finds no 'a - b' span in it",
    ),
    Row(
        "empty",
        ("tempcompass",),
        JUDGE,
        "every TempCompass answer other than the exact gold, a bare letter, 'A.' or 'A)' goes to "
        "lmms-eval's ChatGPT judge (judge failures score 0); the kit grades it by rule",
    ),
)

#: Forms TempCompass sends to lmms-eval's API judge (every rule miss; one row per form).
TEMPCOMPASS_JUDGED = (
    "letter-parens",
    "letter-lower",
    "option-text",
    "answer-is",
    "answer-colon",
    "best-option-prefill",
    "final-answer-is",
    "think-answer-tags",
    "sentence-article",
    "answer-then-other-option",
    "hedge-two",
    "all-letters",
    "no-answer",
)


def rows() -> list[Row]:
    """All rows, TempCompass' judged forms folded into one row each."""
    judged = [
        Row(form, ("tempcompass",), JUDGE, "goes to lmms-eval's ChatGPT judge (see 'empty')")
        for form in TEMPCOMPASS_JUDGED
    ]
    return [*ROWS, *judged]


def classify(spec: str, form: str) -> Row | None:
    """The row classifying a disagreement of ``spec`` on ``form`` (None: unclassified)."""
    for row in rows():
        if row.form == form and spec in row.specs:
            return row
    return None


def markdown_table() -> str:
    """The table docs/eval.md holds (one line per row, TempCompass' judged forms in one)."""
    lines = [
        "| answer form | benchmarks | class | why |",
        "|---|---|---|---|",
    ]
    for row in ROWS:
        kind = f"{row.kind} (pending: {row.pending})" if row.pending else row.kind
        why = row.why.replace("|", "\\|")
        lines.append(f"| `{row.form}` | {', '.join(row.specs)} | {kind} | {why} |")
    judged = ", ".join(f"`{f}`" for f in TEMPCOMPASS_JUDGED)
    lines.append(f"| {judged} | tempcompass | {JUDGE} | as `empty` above |")
    return "\n".join(lines)
