"""Stand-in Buzz agent stack (buzz-acp, buzz-agent, buzz-dev-mcp, buzz CLI) for dev and tests.

Runs inside task containers whose only runtime is a bare `python3`, so everything here is
stdlib-only and Python >= 3.9, with package-relative imports: stack/build.py ships this package
as zipapps under another top-level name.
"""
