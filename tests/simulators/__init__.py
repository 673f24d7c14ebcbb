"""The simulators: the dealer, the shoe, the devices, the game server."""
