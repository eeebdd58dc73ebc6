"""A spec's ``data.hub`` names a revision and a file the Hub can hold: a revision that is a
git ref in the characters Hub refs use (it is printed in ``hf download`` commands) and a file
inside the repo (it is looked up in the local Hub cache by ``train --plan``)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from videorl_kit.cli import app

runner = CliRunner()
SPEC = """\
id: hubby
version: 1
problem_type: numerical
data: {{hub: {{repo: org/name, revision: {revision}, file: {file}}}}}
prompt: {{template: "{{{{ question }}}}"}}
"""


def test_a_hub_revision_or_file_that_is_not_one_is_refused_at_its_field(tmp_path: Path) -> None:
    spec = tmp_path / "hubby.yaml"
    spec.write_text(SPEC.format(revision='"main$(id)"', file='"../../etc/passwd"'))
    result = runner.invoke(app, ["validate", str(spec)])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.startswith(f"{spec}:4: ")]
    assert len(lines) == 2, result.output
    assert "data.hub.revision: invalid revision 'main$(id)'" in lines[0]
    assert "data.hub.file: invalid file '../../etc/passwd': must stay inside the repo" in lines[1]


def test_a_pinned_hub_file_validates(tmp_path: Path) -> None:
    spec = tmp_path / "hubby.yaml"
    spec.write_text(SPEC.format(revision="a" * 40, file="data/train.jsonl"))
    result = runner.invoke(app, ["validate", str(spec)])
    assert result.exit_code == 0, result.output
