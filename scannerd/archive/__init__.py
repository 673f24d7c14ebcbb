"""Records that outlive the table PC: each sealed recording shipped to write-once object storage.

Regulators keep a table's recordings for years, out of reach of whoever runs the
table; a casino does that with an S3-compatible store under Object Lock. The
shipper (``shipper.py``) sends each sealed file there on a thread of its own and
counts it archived only once it reads back as the chain says; ``objects.py``
lets every reader of recordings read one where it lies.
"""
