"""Running a family server: stdio and Streamable HTTP, bearer auth, workers, the start-up line, the error boundary.

Also the portable input schemas every model SDK accepts.
"""
