"""Property testing for any verifier: the verifier contract, executable.

``check_verifier(verifier, ...)`` runs the contract of docs/extending.md as properties (never
raises, bounded time, deterministic in and across processes, picklable, thread-safe, the
gold's forms score 1, wrong answers and hedges score below it, an answer only inside
``<think>`` scores 0, an unreadable gold is ``unverifiable``, the golden case file agrees) and
returns a :class:`VerifierReport`. :mod:`videorl_kit.testing.strategies` holds the Hypothesis
strategies it draws from; the pytest plugin (:mod:`videorl_kit.testing.pytest_plugin`) gives a
test file the whole suite; ``videorl-kit reward check`` runs it from the command line.

Importing this package is light: Hypothesis (the ``testing`` extra) loads when a name below
is first used.

Example:
    >>> from videorl_kit.testing import check_verifier
    >>> report = check_verifier("numeric", examples=10, seed=0, properties=["never_raises"])
    >>> report.verifier, report.ok
    ('numeric@2', True)
"""

from __future__ import annotations

from videorl_kit.core.lazy import lazy_exports

_EXPORTS = {
    "check_verifier": "videorl_kit.testing.check",
    "PROPERTIES": "videorl_kit.testing.properties",
    "PropertyResult": "videorl_kit.testing.report",
    "VerifierReport": "videorl_kit.testing.report",
    "Subject": "videorl_kit.testing.subject",
    "resolve_verifier": "videorl_kit.testing.subject",
    "GoldenCase": "videorl_kit.testing.cases",
    "load_cases": "videorl_kit.testing.cases",
    "case_line": "videorl_kit.testing.cases",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
