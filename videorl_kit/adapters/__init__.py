"""Trainer adapters, importable as ``videorl_kit.adapters``.

Each backend (``trl``, ``openrlhf``) lives in its own subpackage and turns specs,
the frame cache and verifiers into what its trainer consumes.
"""
