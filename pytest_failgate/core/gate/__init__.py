"""One gate run: its checks, the inconclusive and noisy runs, the false-alarm
budget, the rows and their words, and the serialisable result every front end
and output reads. ``runner.run_gate`` runs it start to finish.
"""
