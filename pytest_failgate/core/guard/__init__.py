"""The loosening guard: what the gate enforces now against a git ref
(``loosening``), item by item (``enforced``), and every other route to a
looser gate (``routes``).
"""
