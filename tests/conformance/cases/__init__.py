"""One module per operator family; each defines graph_cases() and validation_cases()."""
