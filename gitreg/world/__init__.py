"""The world a request reads: one catalog's module snapshot, gate and provider side, built in one
place and replaced whole (a sync replaces its snapshot; a reload, all of it)."""
