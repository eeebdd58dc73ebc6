"""The parity cases: every fixture row of every benchmark the kit shares with lmms-eval, answered
in the forms models write, as lmms-eval's ``doc`` and as the kit's sample.

:data:`SHARED` maps each kit spec to the lmms-eval task folder whose ``utils.py`` scores it and
to the function that writes a kit sample as that task's ``doc`` (the columns its scoring reads,
from the fixture row). :func:`responses` gives the answer forms of one sample: multiple choice
(letters alone, with their text, in a sentence, inside ``<answer>``, the option text only,
hedges, an empty answer, a wrong letter, sentences whose article or "Option A is incorrect"
trips a parser), numbers (digits, words, units, a hedge) and time spans (the forms of Charades-STA
answers). Each case is named ``<spec>/<sample id>/<form>``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from videorl_kit.spec.data import Sample
from videorl_kit.spec.prompt import option_texts

LETTERS = "ABCDEFGHIJ"


@dataclass(frozen=True)
class Case:
    """One answer to one sample, for both scorers."""

    spec: str
    sample_id: str
    form: str
    bench: str
    doc: dict[str, Any]
    pred: str

    @property
    def name(self) -> str:
        """``<spec>/<sample id>/<form>``."""
        return f"{self.spec}/{self.sample_id}/{self.form}"


def _texts(sample: Sample) -> list[str]:
    return option_texts(sample.options) or []


def _gold_index(sample: Sample) -> int:
    return LETTERS.index(sample.answer.strip()[0])


def _videomme(sample: Sample) -> dict[str, Any]:
    return dict(sample.raw)


def _mvbench(sample: Sample) -> dict[str, Any]:
    texts = _texts(sample)
    return {"question": sample.question, "candidates": texts, "answer": texts[_gold_index(sample)]}


def _tempcompass(sample: Sample) -> dict[str, Any]:
    return dict(sample.raw)


def _lvbench(sample: Sample) -> dict[str, Any]:
    return {"question": sample.question, "options": _texts(sample), "answer": sample.answer}


def _longvideobench(sample: Sample) -> dict[str, Any]:
    texts = _texts(sample)
    doc: dict[str, Any] = {f"option{i}": "N/A" for i in range(5)}
    doc.update({f"option{i}": text for i, text in enumerate(texts)})
    doc.update(
        {"correct_choice": _gold_index(sample), "id": sample.sample_id, "duration_group": 600,
         "question_category": "TOS", "question": sample.question}
    )  # fmt: skip
    return doc


def _mlvu(sample: Sample) -> dict[str, Any]:
    return {"question": sample.question, "answer": sample.answer, "task_type": "test"}


def _video_holmes(sample: Sample) -> dict[str, Any]:
    texts = _texts(sample)
    return {
        "Question": sample.question,
        "Options": {LETTERS[i]: text for i, text in enumerate(texts)},
        "Answer": sample.answer,
        "Question Type": "SR",
    }


def _minerva(sample: Sample) -> dict[str, Any]:
    doc: dict[str, Any] = {f"answer_choice_{i}": t for i, t in enumerate(_texts(sample))}
    doc.update({"question": sample.question, "answer_id": _gold_index(sample)})
    return doc


def _mmvu(sample: Sample) -> dict[str, Any]:
    texts = _texts(sample)
    return {
        "id": sample.sample_id,
        "question": sample.question,
        "question_type": "multiple-choice",
        "choices": {LETTERS[i]: t for i, t in enumerate(texts)},
        "answer": sample.answer,
    }


def _videommmu(sample: Sample) -> dict[str, Any]:
    track = "Adaptation" if sample.raw.get("image_path") else "Perception"
    mc = sample.problem_type.value == "multiple_choice"
    return {
        "id": f"{track}_Biology_{sample.sample_id}",
        "question": sample.question,
        "options": _texts(sample) if mc else [],
        "answer": sample.answer,
        "question_type": "multiple-choice" if mc else "open",
    }


def _videomathqa(sample: Sample) -> dict[str, Any]:
    return {
        "question_id": sample.sample_id, "question": sample.question, "options": sample.options,
        "answer": sample.answer, "category": sample.raw.get("category"),
        "length": sample.raw.get("length"),
    }  # fmt: skip


def _vsibench(sample: Sample) -> dict[str, Any]:
    return {
        "question": sample.question,
        "question_type": sample.raw["original_question_type"],
        "options": sample.options,
        "ground_truth": sample.answer,
    }


def _charades(sample: Sample) -> dict[str, Any]:
    start, end = json.loads(sample.answer)["time"]
    return {"video": sample.raw["video"], "caption": sample.question, "timestamp": [start, end]}


def _motionbench(sample: Sample) -> dict[str, Any]:
    return {"answer": sample.answer, "question_type": sample.raw.get("original_question_type")}


def _ovobench(sample: Sample) -> dict[str, Any]:
    task = sample.raw["ovo_task"]
    if task == "REC":
        return {"task": task, "id": sample.sample_id, "test_info": [{"count": sample.answer}]}
    if task in ("SSR", "CRR"):
        kind = 1 if sample.answer.lower() == "yes" else 0
        return {"task": task, "id": sample.sample_id, "test_info": [{"type": kind}]}
    return {
        "task": task, "id": sample.sample_id, "question": sample.question,
        "gt": _gold_index(sample),
    }  # fmt: skip


#: kit spec id -> (lmms-eval task folder, doc builder)
SHARED: dict[str, tuple[str, Callable[[Sample], dict[str, Any]]]] = {
    "video-mme": ("videomme", _videomme),
    "mvbench": ("mvbench", _mvbench),
    "tempcompass": ("tempcompass", _tempcompass),
    "lvbench": ("lvbench", _lvbench),
    "longvideobench": ("longvideobench", _longvideobench),
    "mlvu": ("mlvu", _mlvu),
    "video-holmes": ("video_holmes", _video_holmes),
    "minerva": ("minerva", _minerva),
    "mmvu-mc": ("mmvu", _mmvu),
    "video-mmmu": ("videommmu", _videommmu),
    "videomathqa": ("videomathqa", _videomathqa),
    "vsi-bench": ("vsibench", _vsibench),
    "charades-sta": ("charades_sta", _charades),
    "motionbench": ("motionbench", _motionbench),
    "ovo-bench": ("ovobench", _ovobench),
}


def _choice_forms(sample: Sample) -> dict[str, str]:
    texts = _texts(sample)
    gold = sample.answer.strip()[0]
    index = LETTERS.index(gold)
    wrong = LETTERS[(index + 1) % len(texts)]
    text = texts[index]
    return {
        "letter": gold,
        "letter-period": f"{gold}.",
        "letter-parens": f"({gold})",
        "letter-lower": gold.lower(),
        "letter-and-text": f"{gold}. {text}",
        "option-text": text,
        "answer-is": f"The answer is {gold}.",
        "answer-colon": f"Answer: {gold}",
        "best-option-prefill": f"Best option: ({gold})",
        "final-answer-is": f"Let me think. The video shows it clearly.\nTherefore, the final answer is: {gold}",
        "think-answer-tags": f"<think>Option {wrong} looks plausible, but the video shows {text}.</think><answer>{gold}</answer>",
        "sentence-article": f"A person appears at the start, so the correct option is ({gold}).",
        "answer-then-other-option": f"The answer is {gold}. Option {wrong} is incorrect.",
        "wrong-letter": wrong,
        "hedge-two": f"{gold} or {wrong}",
        "all-letters": ", ".join(LETTERS[: len(texts)]),
        "empty": "",
        "no-answer": "I cannot determine the answer from the video.",
    }


def _number_forms(sample: Sample) -> dict[str, str]:
    gold = float(sample.answer)
    shown = f"{gold:g}"
    words = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}
    forms = {
        "number": shown,
        "number-decimal": f"{gold:.1f}",
        "number-in-sentence": f"There are {shown} of them.",
        "number-answer-tags": f"<think>Counting carefully.</think><answer>{shown}</answer>",
        "number-wrong": f"{gold * 2:g}",
        "number-hedge": f"{shown} or {gold * 2:g}",
        "empty": "",
    }
    if gold in words:
        forms["number-word"] = words[int(gold)]
    return forms


def _yes_no_forms(sample: Sample) -> dict[str, str]:
    gold = sample.answer.strip().capitalize()
    other = "No" if gold == "Yes" else "Yes"
    return {
        "yes-no": gold,
        "yes-no-sentence": f"{gold}, the person is doing it.",
        "yes-no-wrong": other,
        "yes-no-letter": gold[0],
        "not-sure": "Not sure",
        "empty": "",
    }


def _span_forms(sample: Sample) -> dict[str, str]:
    start, end = json.loads(sample.answer)["time"]
    s, e = f"{start:g}", f"{end:g}"
    return {
        "span-sentence": f"The event happens in the {s} - {e} seconds.",
        "span-dash": f"{s} - {e}",
        "span-to": f"From {s} to {e} seconds.",
        "span-json-tags": f'<answer>{{"time": [{s}, {e}]}}</answer>',
        "span-start-end-lines": f"Start time: {s} seconds\nEnd time: {e} seconds",
        "span-word-with-to": f"The person stops to think between {s} - {e} seconds.",
        "span-reversed": f"{e} - {s}",
        "span-mmss": f"00:{int(start):02d} - 00:{int(end):02d}",
        "span-wrong": f"{end + 10:g} - {end + 20:g}",
        "empty": "",
    }


def responses(sample: Sample) -> dict[str, str]:
    """The answer forms of one sample, by form name (see the module docstring)."""
    kind = sample.problem_type.value
    if kind == "multiple_choice":
        return _choice_forms(sample)
    if kind in ("numerical", "regression"):
        return _number_forms(sample)
    if kind == "boolean":
        return _yes_no_forms(sample)
    if kind == "temporal_grounding":
        return _span_forms(sample)
    raise ValueError(f"no answer forms for problem type {kind}")
