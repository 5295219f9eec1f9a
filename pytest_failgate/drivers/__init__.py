"""Harness drivers: the sequential gate inside the tools that run evaluations.

Each driver is imported only by a user who runs that tool (it imports the tool), and
feeds ``commands.sequential.CaseGate`` the cases the tool finishes.
"""
