"""gitreg at scale: 10,000 modules x 50 versions in 1,000 monorepos, against 10 of those modules,
every row of issue 19's and issue 25's tables, printed as each is measured (`python -m bench.scale`)."""
