"""Submissions: a bot archive stored as a new version and queued for its build and qualification,
within the user's hourly limits (the site's upload form and the Arena's SubmitBot are adapters
over these services)."""
