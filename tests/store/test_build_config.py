"""BuildConfig: the build's user options in one checked object, shared by the API and the CLI."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest
from typer.testing import CliRunner

import videorl_kit.store.builder as builder
from videorl_kit.cli import app
from videorl_kit.core.errors import UserError
from videorl_kit.store import BuildConfig, build_cache


def test_every_problem_is_reported_at_once_naming_the_flags() -> None:
    with pytest.raises(UserError) as raised:
        BuildConfig(
            workers=0, engine="spark", decoder="opencv", item_timeout_s=-1, batch_items=0,
            max_visual_tokens=0, batch_seconds=0, mp_context="fork",
        )  # type: ignore[arg-type]  # fmt: skip
    message = str(raised.value)
    assert "\n" not in message
    for expected in (
        "--workers must be >= 1, not 0",
        "--engine must be 'local' or 'ray', not 'spark'",
        "--decoder 'opencv' is unknown; choose one of pyav, decord, torchcodec",
        "item timeout must be >= 0 seconds (0: no limit), not -1",
        "--batch-items must be >= 1, not 0",
        "--max-visual-tokens must be >= 1, not 0",
        "batch_seconds must be > 0, not 0",
        "mp_context 'fork' is unsafe",
    ):
        assert expected in message, expected


def test_options_replace_fields_of_a_config_and_unknown_ones_are_refused(
    good_spec: Path, tmp_path: Path
) -> None:
    base = BuildConfig(workers=1, rehash=True, item_timeout_s=0)
    merged = BuildConfig.with_options(base, {"workers": 2})
    assert (merged.workers, merged.rehash, merged.item_limit_s) == (2, True, None)
    with pytest.raises(UserError, match=r"unknown build option\(s\) 'decode_fn'"):
        build_cache([good_spec], tmp_path / "store", decode_fn=print)
    assert not (tmp_path / "store").exists()
    summary = build_cache([good_spec], tmp_path / "store", base, workers=2)
    assert (summary.workers, summary.item_timeout_s, summary.n_failed) == (2, None, 0)


def test_the_command_line_builds_the_default_config_from_its_default_flags(
    good_spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[BuildConfig] = []
    real = builder.build_cache

    def recording(specs, store, config=None, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(config)
        return real(specs, store, config, **kwargs)

    monkeypatch.setattr(builder, "build_cache", recording)
    args = ["build-cache", str(good_spec), "--store", str(tmp_path / "store"), "--json"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    assert seen == [BuildConfig()]
    summary = json.loads(done.stdout)
    assert list(summary)[:6] == [
        "n_input", "n_ok", "n_failed", "n_skipped", "n_already_cached", "seconds",
    ]  # fmt: skip
    assert summary["workers"] == BuildConfig().n_workers


def test_every_option_is_documented() -> None:
    documented = BuildConfig.__doc__ or ""
    for field in fields(BuildConfig):
        assert f"        {field.name}:" in documented, field.name
