"""Subcommands of the ``scannerd`` command line, one module each."""
