"""pytest-failgate: gate LLM/RAG evaluation reports by failure category.

Importing the package is kept free of heavy dependencies, because pytest imports
its plugin module on every run in an environment where it is installed.
"""

__version__ = "0.1.0"
