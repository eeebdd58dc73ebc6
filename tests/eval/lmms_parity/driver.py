"""Score predictions with lmms-eval 0.7.3's own benchmark functions (runs in ``.venv-lmms``).

Reads a JSON list of cases ``{"bench", "doc", "pred"}`` on stdin and writes one verdict per
case on stdout (each response first loses its reasoning blocks as lmms-eval's evaluator does by
default, ``--reasoning_tags`` = ``<think>``/``<analysis>``, with its own ``strip_reasoning_tags``): ``{"score": 1.0 | 0.0 | IoU | MRA | None, "extracted": ..., "path": ...}``.
``path`` names where lmms-eval's own code would leave its rules: ``guess`` (a random letter
for an answer it cannot parse), ``judge`` (it would ask an API judge model), ``excluded`` (it
leaves the sample out of the denominator), else ``rule``.

The scoring functions are lmms-eval's, imported unchanged from the installed package. Only
what they import and never use for scoring is stubbed: heavy modules (torch, transformers,
datasets, cv2, decord, openai) and the ``lmms_eval.tasks`` package initialiser (which builds
lmms-eval's task registry); the per-benchmark ``utils.py`` modules load from their own files.
The only replaced calls are lmms-eval's exits from its rules: the random guess (the module's
``random``) and the API judge (TempCompass' ``get_eval_result``), so a case that would take
one is reported as such instead of a guessed or network-made score.

Usage: ``.venv-lmms/bin/python tests/eval/lmms_parity/driver.py < cases.json``
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

HEAVY = ("torch", "transformers", "datasets", "cv2", "decord", "openai", "accelerate")


class _Placeholder:
    """Whatever a stubbed module is asked for at import time (a class, a function, a type)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> _Placeholder:
        return self


class _StubModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Placeholder


def install_stubs() -> None:
    """Stub the heavy modules and lmms-eval's task-registry package initialiser (and give
    the modules that read ``HF_HOME`` at import one: nothing is downloaded)."""
    os.environ.setdefault("HF_HOME", tempfile.gettempdir())
    for name in HEAVY:
        sys.modules.setdefault(name, _StubModule(name))
    import lmms_eval

    tasks = types.ModuleType("lmms_eval.tasks")
    tasks.__path__ = [str(Path(lmms_eval.__file__).parent / "tasks")]
    sys.modules["lmms_eval.tasks"] = tasks


def utils(bench: str) -> types.ModuleType:
    """The benchmark's ``lmms_eval/tasks/<bench>/utils.py``, as installed."""
    return importlib.import_module(f"lmms_eval.tasks.{bench}.utils")


class _NoGuess:
    """Stands in for a module's ``random``: records that lmms-eval would guess."""

    def __init__(self) -> None:
        self.guessed = False

    def choice(self, seq: Any) -> str:
        self.guessed = True
        return "\x00"  # no option letter: the guess is reported, never scored


def _with_guess(module: types.ModuleType, call: Any) -> tuple[Any, bool]:
    original = module.random
    stand_in = _NoGuess()
    module.random = stand_in
    try:
        return call(), stand_in.guessed
    finally:
        module.random = original


def _letters(doc_answer: str, extracted: str) -> dict[str, Any]:
    return {"score": float(extracted == doc_answer), "extracted": extracted, "path": "rule"}


def score(bench: str, doc: dict[str, Any], pred: str) -> dict[str, Any]:
    """One case through lmms-eval's functions for ``bench`` (see the module docstring)."""
    if bench == "videomme":
        out = utils("videomme").videomme_process_results(doc, [pred])["videomme_perception_score"]
        return _letters(out["answer"], out["pred_answer"])
    if bench == "mvbench":
        out = utils("mvbench").mvbench_process_results(doc, [pred])["mvbench_accuracy"]
        path = "excluded" if out["pred_answer"] == "" else "rule"
        return {"score": float(out["score"]), "extracted": out["pred_answer"], "path": path}
    if bench == "tempcompass":
        module = utils("tempcompass")
        original = module.get_eval_result
        asked: list[str] = []
        module.get_eval_result = lambda prompt, *a, **k: (asked.append(prompt) or "judge", 0)
        try:
            out = module.tempcompass_process_results_multi_choice(doc, [pred])["avg_accuracy"]
        finally:
            module.get_eval_result = original
        if asked:
            return {"score": None, "extracted": None, "path": "judge"}
        return {"score": float(out["rating"]), "extracted": pred, "path": "rule"}
    if bench == "lvbench":
        module = utils("lvbench")
        out = module.lvbench_process_results(doc, [pred])["lvbench_score"]
        return {
            "score": float(out),
            "extracted": module.extract_characters_regex(pred),
            "path": "rule",
        }
    if bench == "longvideobench":
        module = utils("longvideobench")
        out, guessed = _with_guess(
            module, lambda: module.longvideobench_process_results(doc, [pred])
        )
        record = out["lvb_acc"]
        if guessed:
            return {"score": None, "extracted": None, "path": "guess"}
        return _letters(record["answer"], record["parsed_pred"])
    if bench == "mlvu":
        out = utils("mlvu").mlvu_process_results(doc, [pred])["mlvu_percetion_score"]
        return _letters(out["answer"], out["pred_answer"])
    if bench == "video_holmes":
        module = utils("video_holmes")
        out, guessed = _with_guess(module, lambda: module.video_holmes_process_results(doc, [pred]))
        if guessed:
            return {"score": None, "extracted": None, "path": "guess"}
        return {
            "score": float(out["video_holmes_accuracy"]["score"]),
            "extracted": None,
            "path": "rule",
        }
    if bench == "minerva":
        module = utils("minerva")
        out, guessed = _with_guess(module, lambda: module.minerva_process_results(doc, [pred]))
        record = out["minerva_acc"]
        if guessed:
            return {"score": None, "extracted": None, "path": "guess"}
        return _letters(record["answer"], record["pred_answer"])
    if bench == "mmvu":
        module = utils("mmvu")
        correct = module.evaluate_with_rule_based(doc, pred)
        if not correct and doc["question_type"] != "multiple-choice":
            return {"score": None, "extracted": None, "path": "judge"}
        return {"score": float(correct), "extracted": None, "path": "rule"}
    if bench == "videommmu":
        module = utils("videommmu")
        record = module.videommmu_process_results(doc, [pred])["mmmu_acc"]
        judged, _ = module.evaluate_videommmu([record])
        verdict = judged[record["id"]]
        return {
            "score": float(verdict == "Correct"),
            "extracted": record["parsed_pred"],
            "path": "rule",
        }
    if bench == "videomathqa":
        out = utils("videomathqa").videomathqa_process_results(doc, [pred])
        record = out["videomathqa_perception_score"]
        return _letters(record["answer"], record["pred_answer"])
    if bench == "vsibench":
        record = utils("vsibench").vsibench_process_results(dict(doc), [pred])["vsibench_overall"]
        key = "accuracy" if "accuracy" in record else "MRA:.5:.95:.05"
        return {"score": float(record[key]), "extracted": None, "path": "rule"}
    if bench == "charades_sta":
        module = utils("charades_sta")
        spans = module.extract_time(pred)
        if not spans:
            return {"score": 0.0, "extracted": None, "path": "rule"}
        return {
            "score": float(module.iou(spans[0], doc["timestamp"])),
            "extracted": spans[0],
            "path": "rule",
        }
    if bench == "motionbench":
        out = utils("motionbench").motionbench_process_results(doc, [pred])
        return {"score": float(out["motionbench_acc"]["score"]), "extracted": None, "path": "rule"}
    if bench == "ovobench":
        score_module = importlib.import_module("lmms_eval.tasks.ovobench.score_utils.score")
        if doc["task"] in ("REC", "SSR", "CRR"):
            entry = {**doc, "test_info": [{**doc["test_info"][0], "response": pred}]}
            _, scores = score_module.calculate_score_forward([entry])
            return {"score": float(scores[doc["task"]][0]), "extracted": None, "path": "rule"}
        record = utils("ovobench").ovo_back_real_process_results(doc, [pred])["back_real_acc"]
        results, _ = score_module.calculate_score_backward_realtime([record])
        return {"score": float(results[0]["score"]), "extracted": None, "path": "rule"}
    raise ValueError(f"no lmms-eval scorer for {bench!r}")


def main() -> None:
    """Score the cases on stdin; print the verdicts as one JSON list."""
    install_stubs()
    from lmms_eval.api.reasoning import parse_reasoning_tags_config, strip_reasoning_tags

    # lmms-eval 0.7.3 __main__.py: --reasoning_tags defaults to these pairs
    tags = parse_reasoning_tags_config(
        cli_value='[["<think>", "</think>"], ["<analysis>", "</analysis>"]]'
    )
    cases = json.load(sys.stdin)
    verdicts = [
        score(case["bench"], case["doc"], strip_reasoning_tags(case["pred"], tags))
        for case in cases
    ]
    json.dump(verdicts, sys.stdout)


if __name__ == "__main__":
    main()
