"""The outbox and the journal, in process."""
