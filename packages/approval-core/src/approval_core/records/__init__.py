"""Single-use records (in this process, or Redis shared by replicas), the key file, the audit log."""
