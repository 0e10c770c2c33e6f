"""`python -m gitreg`."""

from gitreg.cli import main

raise SystemExit(main())
