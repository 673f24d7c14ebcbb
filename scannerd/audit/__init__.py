"""``scannerd audit``: re-validate a set of recordings and report on the game they record (docs/audit.md).

One job per module: ``facts`` replays one file (in a worker) and keeps what
the report needs of it; ``published`` compares a file's replay with the
state the table saved when the next file began; ``chances`` holds each
game's exact odds as the audit weighs hands with them; ``stats`` the
goodness-of-fit test, a fact's z and the confidence band; ``tally`` one
game's hands in a group; ``staff`` what each staff id the events name is
credited with; ``suspensions`` a table's suspension events paired into time
suspended; ``review`` the hands to look at on video, each with its time
range; ``aggregate`` groups the facts per table, shoe, dealer and day and
decides what is flagged; ``report_json`` and ``report_html`` write the report.
"""
