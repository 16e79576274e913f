"""Live streams' machinery: Redis streams per audience (streams), the worker's publisher, the relay
of a remote seat's decisions (relay), and the site's stream readers (hub). It holds no models and
reads no database: what a viewer may follow and a person's answers are the matches app's
(matches.live_selectors, matches.live_services). See docs/live.md."""
