"""Stand-ins for the table's hardware and the game server, for tests and demos."""
