"""The `gitreg` command's subcommands, one module per kind of work; `cli.py` parses the command
line and calls them."""
