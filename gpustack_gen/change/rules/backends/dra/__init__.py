"""The change rules of backend dra: a move to or from it (:mod:`.move`), changes on a cluster that stays on it (:mod:`.objects`)."""
