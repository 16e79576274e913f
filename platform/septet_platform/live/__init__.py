"""Live matches: the events of a match as it is played, per audience, and the seats whose
decisions come from outside the worker (a person at a table). See docs/live.md."""
