"""Documentation computed from a module's code at one commit: README, inputs, outputs, required
providers, module calls, resources, submodules and examples."""
