"""Who works the table: the house's staff list, and the PINs it checks."""
