"""What the game server sees: the events, the retained payloads, the topics, the requests'
parsing, the table's state, and the catalogues of alert codes, commands and ids.

Pure data and pure functions: the pydantic models here are the MQTT contract's one definition.
"""
