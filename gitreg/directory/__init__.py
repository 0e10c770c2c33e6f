"""The directory: what a requester may read (modules and hosted providers, newest versions,
descriptions), listed and searched for the registry API and the pages."""
