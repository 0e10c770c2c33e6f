"""Git: repository locations, bare clones (the only GitPython and dulwich code), archives."""
