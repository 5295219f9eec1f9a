"""The one layer between the front ends (pytest, the ``failgate`` command, MCP) and the core.

``config`` resolves a run's settings (given values, the ini file, defaults) into one
``Config``; ``plugins`` loads every plugin through one ``pluggy.PluginManager``. The
front ends only parse their inputs into these and render what comes back.
"""
