"""Developer tools of webnn-wgsl (run from the repository root as ``python -m tools.<name>``)."""
