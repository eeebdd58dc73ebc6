"""videorl-kit: declarative RLVR on video understanding.

Declare a task once in YAML, decode every video once into a Lance cache, score
model outputs with strict verifiers, and hand the same data and rewards to a
trainer or the evaluator. Importing the package has no side effects.
"""

__version__ = "0.1.0"
