"""The webnn-wgsl test suite (a package, so helpers import as ``tests.graph_runner``)."""
