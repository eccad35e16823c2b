"""Prolific, end to end: its REST API (:mod:`.client`), the study's submissions reconciled,
reviewed and paid bonuses (:mod:`.review`, :mod:`.cli`), and its webhook (:mod:`.webhook`)."""
