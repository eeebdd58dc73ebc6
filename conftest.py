"""Names the docstring examples of the store's reading API run with (pytest's doctest namespace).

``store_dir`` is a small real frame cache, the synthetic demo task (two 4 s clips and two
stills, :func:`videorl_kit.synth.write_demo_task`) built once per test session on first use;
``store`` is it opened with :class:`~videorl_kit.store.FrameStore`, and ``key`` is the cache key
of its first clip.
"""

from __future__ import annotations

from pathlib import Path

import pytest

# the modules whose examples read a real store (their docstrings name store_dir, store, key)
STORE_EXAMPLES = (
    "videorl_kit.store.reader",
    "videorl_kit.store.verify",
    "videorl_kit.store.repair",
)


@pytest.fixture(scope="session")
def demo_store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo task's frame cache, built once."""
    from videorl_kit.spec import load_spec
    from videorl_kit.store import build_cache
    from videorl_kit.synth import write_demo_task

    folder = tmp_path_factory.mktemp("demo-store")
    build_cache([load_spec(write_demo_task(folder))], folder / "cache", workers=1)
    return folder / "cache"


@pytest.fixture(autouse=True)
def _store_example_names(request: pytest.FixtureRequest, doctest_namespace: dict) -> None:
    if not request.node.name.startswith(STORE_EXAMPLES):
        return
    from videorl_kit.store import FrameStore

    store_dir = request.getfixturevalue("demo_store_dir")
    store = FrameStore.open(store_dir)
    doctest_namespace.update(
        store_dir=str(store_dir),
        store=store,
        key=next(k for k in store if store.get(k).n_frames > 1),
    )
