"""The command line, one subcommand at a time."""
