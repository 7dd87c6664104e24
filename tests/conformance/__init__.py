"""WebNN conformance suite: graph and validation cases as JSON data (see encode.py, cases/)."""
