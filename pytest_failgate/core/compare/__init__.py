"""A run against a baseline run: pairing cases, exact statistics, noise bands."""
