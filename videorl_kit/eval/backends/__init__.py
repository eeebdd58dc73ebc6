"""Model backends: transformers (CPU/GPU), vLLM (GPU), replay (outputs made elsewhere), random.

Every backend answers :class:`~videorl_kit.eval.requests.GenerationRequest` batches with one
response string per request, in order, and describes itself for ``results.json``.
"""
