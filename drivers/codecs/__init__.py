"""Pure, incremental decoders: one module per wire protocol, no clock, no I/O."""
