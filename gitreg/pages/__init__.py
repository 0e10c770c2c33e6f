"""The registry's pages for people: templates, their stylesheet and script, safe READMEs."""
