"""The approval page: pending approvals, passkeys and pairing, the loopback listener, the push."""
