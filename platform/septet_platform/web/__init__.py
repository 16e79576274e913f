"""The web site: ladders, bots, matches with the replay viewer, rules, and the user area."""
