"""The pure judgement: cards, rules, the validator, the shuffle check, the table."""
