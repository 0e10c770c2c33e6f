"""Who calls the registry's modules: `module` blocks in its modules and in consumers' code."""
