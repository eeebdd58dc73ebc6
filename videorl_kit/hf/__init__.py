"""``hf://`` references: parse them, resolve them to local files pinned to a commit sha.

This sits below the spec layer (a spec may ``include:`` an ``hf://`` file or read its data
from a Hub dataset) and imports nothing of the kit above core. Publishing and pulling whole
spec repos (:mod:`videorl_kit.hub`) sit above the spec layer and build on these modules:

==============  ===============================================================
``refs``        ``ORG/NAME[@REV]`` and ``hf://ORG/NAME@REV/path``
``resolve``     one Hub file at an exact commit, checked against the repo's manifest
``manifest``    the sha256 of every file of a published spec repo
``safety``      a downloaded YAML file must be plain data
``client``      huggingface_hub: endpoint, token, cache, errors as one line
``errors``      ``HubError``, ``HubIntegrityError`` (both ``UserError``)
==============  ===============================================================

Example:
    >>> from videorl_kit.hf.refs import parse_hf_uri
    >>> parse_hf_uri("hf://my-org/video-tasks@main/specs/a.yaml").path
    'specs/a.yaml'
"""
