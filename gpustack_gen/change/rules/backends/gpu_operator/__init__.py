"""The change rules of backend gpu-operator that concern what only the Operator runs (the MIG manager)."""
