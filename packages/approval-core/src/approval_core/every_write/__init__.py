"""Seed 004's every-write profile: every changing request shown and bound before it goes out."""
