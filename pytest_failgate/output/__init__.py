"""Showing a ``GateResult``: terminal text, Markdown, HTML, SVG charts, GitHub annotations.

Renderers read the result the core built; they decide nothing about verdicts.
"""
