"""The contract the game server sees: events, schemas, catalogues, requests."""
