"""The guard table of ntfy-mcp: which tools ask a person, and when.

Filled in as the tools arrive; every tool gets exactly one row.
"""

from approval_core import GuardTable

GUARDS = GuardTable({})
