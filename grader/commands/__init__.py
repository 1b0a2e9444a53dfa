"""One module per ``grader`` subcommand; see :data:`grader.cli.COMMANDS`."""
