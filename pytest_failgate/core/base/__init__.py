"""The lowest layer: errors, safe file and YAML access, wording helpers, the
verdict vocabulary, the ini file. It imports nothing else of failgate.
"""
