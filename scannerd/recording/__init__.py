"""A table's recordings: the format, the recorder that writes it, replay, the chain and signatures."""
