"""What keeps the table's events and state through a crash: the outbox, the journal, the seq ceiling."""
