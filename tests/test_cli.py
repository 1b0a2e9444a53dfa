"""The `grader` shell: every command has help, and every option says what it does."""
import pytest
from click.testing import CliRunner

from grader.cli import COMMANDS, cli


def test_top_level_help_lists_every_command():
    r = CliRunner().invoke(cli, ["--help"])
    assert r.exit_code == 0
    for name in COMMANDS:
        assert name in r.output


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_help_and_every_option_a_help_text(name):
    r = CliRunner().invoke(cli, [name, "--help"])
    assert r.exit_code == 0, r.output
    assert f"Usage: cli {name}" in r.output or f"Usage: grader {name}" in r.output
    command = cli.get_command(None, name)
    assert (command.help or "").strip(), f"{name} has no docstring"
    for param in command.params:
        if param.param_type_name == "option" and param.name != "help":
            assert (param.help or "").strip(), f"{name} {param.opts[0]} has no help="


def test_unknown_command_is_a_usage_error():
    r = CliRunner().invoke(cli, ["no-such-command"])
    assert r.exit_code == 2
    assert "No such command" in r.output
