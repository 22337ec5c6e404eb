"""What a guarded call asks, what a yes binds, and how each answer is judged."""
