"""The bottom layer: the rules every other package shares, defined once.

Nothing here imports another package of the kit, so every layer may import it:

==========================  ==========================================================
``core.errors``             ``VideoRLKitError`` (the root of the kit's errors), ``UserError``
``core.problem_types``      the problem-type registry (types, aliases, default verifiers)
``core.budget``             video and image budgets (frames, pixels, resize factor)
``core.reward_rules``       reward weights, format rules, what text is graded
``core.skip_rules``         the named rules by which a row or media item is skipped
``core.verifiers``          the verifier registry: names, versions, problem types, params,
                            where each verifier lives, retired versions
``core.lazy``               the lazy-export helper of the packages' ``__init__`` modules
==========================  ==========================================================
"""
