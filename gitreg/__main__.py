"""`python -m gitreg`."""

from gitreg.commands.cli import main

raise SystemExit(main())
