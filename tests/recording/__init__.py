"""Recordings: the format, the recorder, replay, the chain and signatures."""
