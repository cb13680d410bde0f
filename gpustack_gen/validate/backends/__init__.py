"""Validators of the artifacts only one backend writes, a module per backend (HAMi's values, the DRA driver's,
the standalone device plugin chart's)."""
