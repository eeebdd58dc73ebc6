"""Judge-graded questions: a spec's ``eval.judge`` grades them with a local model, or they
are reported as not scored.

Some benchmarks grade open answers with a judge model. A spec says which problem types
(``eval.judge.problem_types``); their verifier verdict is replaced here by the judge's:

* with ``eval.judge.model`` (a local model folder, or ``--judge-model``), the judge reads
  the spec's prompt rendered for the answer, greedy, through the transformers or vLLM
  backend; its verdict (:func:`~videorl_kit.spec.judging.parse_verdict`) is the accuracy;
* a replayed samples file that holds a judgement of *this run's* judge (the judge model's
  fingerprint, the verdict rule and the rendered prompt all equal) gives it back without
  running the judge (``replayed``); its verdict is read again from the stored output, never
  taken from the stored ``verdict``. A stored judgement is an input from a file, like the
  stored ``accuracy`` a replay re-grades: without a judge model for this run it cannot be
  checked and is not used; a judgement of another judge (or a made-up fingerprint) is judged
  again; ``rejudge`` judges every question again. Each judgement not reused is named in the
  record's ``details.stored_judgement`` and counted (``n_stored_not_reused``);
* without a judgement, or when the judge gives no verdict, the question is ``unscored``:
  counted (``n_unscored``), never averaged as a 0.

Every judgement and its prompt are kept in the sample's record (``judge``).

Example:
    >>> from videorl_kit.spec.eval_section import JudgeSpec
    >>> spec = JudgeSpec(problem_types=["open_ended"], prompt="{{ gold }} vs {{ answer }}")
    >>> JudgeRun(spec, None).applies("open_ended"), JudgeRun(spec, None).applies("ocr")
    (True, False)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from videorl_kit.core.errors import UserError
from videorl_kit.eval.backends.base import Backend
from videorl_kit.eval.records import SampleRecord
from videorl_kit.eval.requests import GenerationRequest, sample_seed
from videorl_kit.rewards.extract import extract_answer
from videorl_kit.spec.data import Sample
from videorl_kit.spec.eval_section import GenerationParams, JudgeSpec
from videorl_kit.spec.judging import judge_prompt, parse_verdict

UNSCORED = "unscored"
#: The ``details`` key naming why a judgement stored in a replayed file was not reused.
STORED_NOT_REUSED = "stored_judgement"
#: What a reused stored judgement keeps (its stored ``verdict`` is read again from ``output``).
_STORED_KEYS = ("prompt", "output", "model", "fingerprint", "verdict_rule")


@dataclass
class JudgeRun:
    """The judge of one task: its spec, its backend (None: no judge model) and counts."""

    spec: JudgeSpec
    backend: Backend | None
    stored: dict[str, dict[str, Any]] = field(default_factory=dict)
    rejudge: bool = False

    def applies(self, problem_type: str) -> bool:
        """Whether questions of ``problem_type`` are graded by the judge."""
        return any(t.value == problem_type for t in self.spec.problem_types)

    def summary(self, records: list[SampleRecord]) -> dict[str, Any]:
        """What ``results.json`` records of the judge (``TaskResult.judge``), counted over the
        task's final records (a resumed run counts what earlier runs judged too)."""
        info = self.backend.info() if self.backend is not None else None
        graded = [r for r in records if self.applies(r.problem_type)]
        blocks = [r.judge for r in graded if r.judge is not None]
        return {
            "problem_types": [t.value for t in self.spec.problem_types],
            "model": info.path if info else None,
            "fingerprint": info.fingerprint if info else None,
            "backend": self.spec.backend if info else None,
            "verdict": self.spec.verdict,
            "n_graded": len(graded),
            "n_judged": sum(1 for b in blocks if not b.get("replayed")),
            "n_replayed": sum(1 for b in blocks if b.get("replayed")),
            "n_unscored": sum(1 for r in graded if r.status == UNSCORED),
            "n_stored_not_reused": sum(1 for r in graded if STORED_NOT_REUSED in r.details),
        }

    def stored_problem(self, stored: dict[str, Any], prompt: str) -> str | None:
        """Why a judgement stored in a replayed file cannot be reused here (None: it can):
        it must come from this run's judge model (same fingerprint), verdict rule and prompt.

        Example:
            >>> from videorl_kit.spec.eval_section import JudgeSpec
            >>> run = JudgeRun(JudgeSpec(problem_types=["open_ended"], prompt="{{ gold }}"), None)
            >>> run.stored_problem({"prompt": "p", "output": "Judgement: 1"}, "p")
            'no judge model in this run to check it against (give --judge-model)'
        """
        if self.backend is None:
            return "no judge model in this run to check it against (give --judge-model)"
        if self.rejudge:
            return "--rejudge"
        if stored.get("prompt") != prompt:
            return "its judge prompt differs from this run's"
        if stored.get("verdict_rule") != self.spec.verdict:
            return "its verdict rule differs from this run's"
        if stored.get("fingerprint") != self.backend.info().fingerprint:
            return "made by another judge model (fingerprint differs from this run's judge)"
        return None

    def grade(
        self,
        records: list[SampleRecord],
        samples: dict[str, Sample],
        *,
        weights: tuple[float, float],
        seed: int,
    ) -> list[SampleRecord]:
        """``records`` with the judge's verdict on every judge-graded one (see the module)."""
        pending: list[tuple[int, str]] = []
        out = list(records)
        for index, record in enumerate(records):
            if not self.applies(record.problem_type) or record.status != "ok":
                continue
            sample = samples[record.sample_id]
            answer = extract_answer(record.response).answer or ""
            prompt = judge_prompt(
                self.spec, question=sample.question, options=sample.options, gold=sample.answer,
                answer=answer, response=record.response,
            )  # fmt: skip
            stored = self.stored.get(record.sample_id)
            problem = None if stored is None else self.stored_problem(stored, prompt)
            if stored is not None and problem is None:
                block = {key: stored.get(key) for key in _STORED_KEYS}
                out[index] = self._verdict(record, {**block, "replayed": True}, weights)
                continue
            if problem is not None:  # named in the record, counted in the summary
                record = record.model_copy(
                    update={"details": {**record.details, STORED_NOT_REUSED: problem}}
                )
                out[index] = record
            if self.backend is None:
                reason = "judge-graded question and no judge model"
                if problem is not None:
                    reason += f"; the judgement in the predictions file is not used: {problem}"
                out[index] = _unscored(record, reason)
            else:
                pending.append((index, prompt))
        if pending and self.backend is not None:
            generation = GenerationParams(temperature=0.0, max_new_tokens=self.spec.max_new_tokens)
            requests = [
                GenerationRequest(
                    task_id=f"{records[i].task_id}:judge",
                    sample_id=records[i].sample_id,
                    prompt=prompt,
                    system=None,
                    problem_type="open_ended",
                    options=None,
                    generation=generation,
                    seed=sample_seed(seed, f"{records[i].task_id}:judge", records[i].sample_id),
                )
                for i, prompt in pending
            ]
            try:
                outputs = self.backend.generate(requests)
            except UserError:
                raise
            except Exception as exc:  # the judge failed on this batch: say so, score nothing
                outputs = [exc] * len(requests)  # type: ignore[list-item]
            info = self.backend.info()
            for (index, prompt), output in zip(pending, outputs, strict=True):
                if isinstance(output, Exception):
                    reason = f"judge failed: {type(output).__name__}: {output}"[:300]
                    out[index] = _unscored(out[index], reason)
                    continue
                block = {
                    "prompt": prompt,
                    "output": output,
                    "model": info.path,
                    "fingerprint": info.fingerprint,
                    "verdict_rule": self.spec.verdict,
                }
                out[index] = self._verdict(out[index], block, weights)
        return out

    def _verdict(
        self, record: SampleRecord, block: dict[str, Any], weights: tuple[float, float]
    ) -> SampleRecord:
        verdict = parse_verdict(str(block.get("output", "")), self.spec.verdict)
        block = {**block, "verdict": verdict}
        if verdict is None:
            return _unscored(record, "the judge gave no verdict", block)
        w_acc, w_fmt = weights
        return record.model_copy(
            update={
                "accuracy": verdict,
                "overall": min(1.0, w_acc * verdict + w_fmt * record.format),
                "details": {
                    **record.details,
                    "graded_by": "judge",
                    "rule_accuracy": record.accuracy,
                },
                "judge": block,
            }
        )


def _unscored(
    record: SampleRecord, reason: str, block: dict[str, Any] | None = None
) -> SampleRecord:
    return record.model_copy(
        update={
            "accuracy": 0.0,
            "overall": 0.0,
            "status": UNSCORED,
            "details": {**record.details, "unscored": reason, "rule_accuracy": record.accuracy},
            "judge": block,
        }
    )
