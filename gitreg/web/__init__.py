"""The HTTP side: thin Starlette handlers per protocol over the domain objects."""
