"""Exact statistics (binomial tails, Holm, intervals, noise allowances): integer
and fraction arithmetic only, no report or ceiling in sight.
"""
