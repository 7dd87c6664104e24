"""Model converters: packaged weights -> weights.bin + manifest.json (see convert.py)."""
